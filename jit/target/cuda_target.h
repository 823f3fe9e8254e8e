// CudaTarget: a CUDA GPU architecture as a type (XLA's CudaComputeCapability is the model):
// parsed once, it answers which instructions it has and whether a feature needs its
// architecture-specific variant ("sm_90a"), and the default lives here alone. Nothing else
// in warptrace compares "sm_NN" strings.
//
//   ASSIGN_OR_RETURN(CudaTarget target, CudaTarget::Parse("sm_90"));
//   target.Has(TargetFeature::kTma);    // true
//   target.Has(TargetFeature::kWgmma);  // false: wgmma needs sm_90a
//   target.WithFeature(TargetFeature::kWgmma)->ToString();  // "sm_90a"
//
// TargetRequirements: what a kernel needs of its target, each feature with the builder path
// of its first use, in the kernel's order. Resolve() gives the target to compile for on a
// GPU (or for a requested architecture): the target itself, or its architecture-specific
// variant, or an error naming the construct and the target:
//   ASSIGN_OR_RETURN(CudaTarget compile_for, kernel.requirements.Resolve(gpu_target));
//
// Features and where the PTX ISA has them (each instruction's "Target ISA notes"):
//   cp.async                      sm_80 and later
//   mbarrier                      sm_80 and later
//   bulk copies (cp.async.bulk, mbarrier expect-tx, fence.proxy.async)   sm_90 and later
//   TMA (cp.async.bulk.tensor)    sm_90 and later
//   clusters                      sm_90 and later
//   TMA multicast (.multicast::cluster)  sm_90a, and the a/f variants of sm_100 and later
//   wgmma                         sm_90a only (Blackwell has tcgen05 instead)
//   setmaxnreg                    sm_90a, and the a/f variants of sm_100 and later
//   tcgen05                       the a/f variants of sm_100, sm_103 and sm_110
// Thread-safety: values; every member is const.
#ifndef WARPTRACE_JIT_TARGET_CUDA_TARGET_H_
#define WARPTRACE_JIT_TARGET_CUDA_TARGET_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace warptrace {

// X(enumerator, name): the one list of target features.
#define WARPTRACE_TARGET_FEATURES(X) \
  X(kCpAsync, "cp.async")            \
  X(kMbarrier, "mbarrier")           \
  X(kBulkCopy, "bulk copies")        \
  X(kTma, "TMA")                     \
  X(kClusters, "clusters")           \
  X(kMulticast, "TMA multicast")     \
  X(kWgmma, "wgmma")                 \
  X(kSetMaxNReg, "setmaxnreg")       \
  X(kTcgen05, "tcgen05")

enum class TargetFeature : uint8_t {
#define WARPTRACE_TARGET_FEATURE_ENUM(e, name) e,
  WARPTRACE_TARGET_FEATURES(WARPTRACE_TARGET_FEATURE_ENUM)
#undef WARPTRACE_TARGET_FEATURE_ENUM
};

#define WARPTRACE_TARGET_FEATURE_COUNT(e, name) +1
inline constexpr int kTargetFeatureCount = 0 WARPTRACE_TARGET_FEATURES(WARPTRACE_TARGET_FEATURE_COUNT);
#undef WARPTRACE_TARGET_FEATURE_COUNT

// "wgmma", "TMA", ...
absl::string_view TargetFeatureName(TargetFeature feature);
// The targets that have `feature`, for messages: "sm_90a only", "sm_90 and later", ...
absl::string_view TargetFeatureWhere(TargetFeature feature);

class CudaTarget {
 public:
  // The suffix: none (portable to later GPUs), 'a' (architecture-specific: this GPU only),
  // 'f' (family-specific: this GPU family).
  enum class Variant : uint8_t { kPortable, kArchSpecific, kFamily };

  constexpr CudaTarget(int major, int minor, Variant variant = Variant::kPortable)
      : major_(major), minor_(minor), variant_(variant) {}

  // sm_90 (the H100 and H200): what warptrace compiles for when nothing says otherwise.
  static constexpr CudaTarget Default() { return CudaTarget(9, 0); }

  // "sm_<major><minor>[a|f]" ("sm_80", "sm_90a", "sm_100f", "sm_120"). Errors:
  // InvalidArgument naming the text and what is expected.
  static absl::StatusOr<CudaTarget> Parse(absl::string_view name);

  int major() const { return major_; }
  int minor() const { return minor_; }
  Variant variant() const { return variant_; }
  // 90 for sm_90a.
  int ComputeCapability() const { return major_ * 10 + minor_; }
  bool IsAtLeastHopper() const { return major_ >= 9; }
  bool IsAtLeastBlackwell() const { return major_ >= 10; }

  std::string ToString() const;  // "sm_90a"

  bool Has(TargetFeature feature) const;
  // This target if it has `feature`, else its architecture-specific variant if that has it,
  // else nullopt (the feature does not exist on this GPU generation).
  std::optional<CudaTarget> WithFeature(TargetFeature feature) const;
  // The same GPU with another suffix.
  CudaTarget WithVariant(Variant variant) const { return CudaTarget(major_, minor_, variant); }

  friend bool operator==(const CudaTarget&, const CudaTarget&) = default;

 private:
  int major_;
  int minor_;
  Variant variant_;
};

class TargetRequirements {
 public:
  struct Use {
    TargetFeature feature;
    std::string path;  // builder path of the first construct or statement using it
  };

  // Records that `path` uses `feature`, unless an earlier use did.
  void Add(TargetFeature feature, std::string path);

  bool empty() const { return uses_.empty(); }
  bool Has(TargetFeature feature) const { return FirstUse(feature) != nullptr; }
  // The builder path of the first use of `feature`, or null.
  const std::string* FirstUse(TargetFeature feature) const;
  // Every feature's first use, in the order the kernel uses them.
  const std::vector<Use>& uses() const { return uses_; }

  // The target to compile for: `target` when it has every feature, else its
  // architecture-specific variant when that has them. Errors: InvalidArgument naming the
  // first feature the GPU generation lacks, its builder path, where the feature exists, and
  // `target` (e.g. wgmma on sm_100).
  absl::StatusOr<CudaTarget> Resolve(const CudaTarget& target) const;

  // The first use (in the kernel's order) of a feature `target` lacks but its resolved
  // target has, i.e. what made Resolve choose a variant; null when none did.
  const Use* FirstVariantUse(const CudaTarget& target) const;

  friend bool operator==(const TargetRequirements& a, const TargetRequirements& b) {
    if (a.uses_.size() != b.uses_.size()) return false;
    for (size_t i = 0; i < a.uses_.size(); ++i) {
      if (a.uses_[i].feature != b.uses_[i].feature || a.uses_[i].path != b.uses_[i].path) {
        return false;
      }
    }
    return true;
  }

 private:
  std::vector<Use> uses_;
};

}  // namespace warptrace

#endif  // WARPTRACE_JIT_TARGET_CUDA_TARGET_H_

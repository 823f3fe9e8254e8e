#include "jit/target/cuda_target.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace warptrace {

absl::string_view TargetFeatureName(TargetFeature feature) {
  switch (feature) {
#define WARPTRACE_TARGET_FEATURE_NAME(e, name) \
  case TargetFeature::e:                       \
    return name;
    WARPTRACE_TARGET_FEATURES(WARPTRACE_TARGET_FEATURE_NAME)
#undef WARPTRACE_TARGET_FEATURE_NAME
  }
  return "?";
}

absl::string_view TargetFeatureWhere(TargetFeature feature) {
  switch (feature) {
    case TargetFeature::kCpAsync:
    case TargetFeature::kMbarrier:
      return "sm_80 and later";
    case TargetFeature::kBulkCopy:
    case TargetFeature::kTma:
    case TargetFeature::kClusters:
      return "sm_90 and later";
    case TargetFeature::kWgmma:
      return "sm_90a only (Hopper; Blackwell has tcgen05 instead)";
    case TargetFeature::kSetMaxNReg:
    case TargetFeature::kMulticast:
      return "sm_90a and the a/f variants of sm_100 and later";
    case TargetFeature::kTcgen05:
      return "the a/f variants of sm_100, sm_103 and sm_110";
  }
  return "?";
}

absl::StatusOr<CudaTarget> CudaTarget::Parse(absl::string_view name) {
  absl::string_view rest = name;
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "CUDA architecture '", name,
        "': expected sm_<major><minor> with an optional a or f suffix, e.g. sm_80, sm_90a, "
        "sm_100a"));
  };
  if (!absl::ConsumePrefix(&rest, "sm_") || rest.size() < 2) return bad();
  Variant variant = Variant::kPortable;
  if (absl::ConsumeSuffix(&rest, "a")) {
    variant = Variant::kArchSpecific;
  } else if (absl::ConsumeSuffix(&rest, "f")) {
    variant = Variant::kFamily;
  }
  if (rest.size() < 2 || rest.size() > 3) return bad();
  for (char c : rest) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return bad();
  }
  int number = 0;
  if (!absl::SimpleAtoi(rest, &number) || number < 10) return bad();
  return CudaTarget(number / 10, number % 10, variant);
}

std::string CudaTarget::ToString() const {
  return absl::StrCat("sm_", major_, minor_,
                      variant_ == Variant::kArchSpecific ? "a"
                      : variant_ == Variant::kFamily     ? "f"
                                                         : "");
}

bool CudaTarget::Has(TargetFeature feature) const {
  const int cc = ComputeCapability();
  switch (feature) {
    case TargetFeature::kCpAsync:
    case TargetFeature::kMbarrier:
      return cc >= 80;
    case TargetFeature::kBulkCopy:
    case TargetFeature::kTma:
    case TargetFeature::kClusters:
      return cc >= 90;
    case TargetFeature::kWgmma:
      return cc == 90 && variant_ == Variant::kArchSpecific;
    case TargetFeature::kSetMaxNReg:
    case TargetFeature::kMulticast:  // PTX ISA: .multicast::cluster "SM_90a, SM_100a, ..."
      return (cc == 90 && variant_ == Variant::kArchSpecific) ||
             (cc >= 100 && variant_ != Variant::kPortable);
    case TargetFeature::kTcgen05:
      return (cc == 100 || cc == 103 || cc == 110) && variant_ != Variant::kPortable;
  }
  return false;
}

std::optional<CudaTarget> CudaTarget::WithFeature(TargetFeature feature) const {
  if (Has(feature)) return *this;
  const CudaTarget specific = WithVariant(Variant::kArchSpecific);
  if (specific.Has(feature)) return specific;
  return std::nullopt;
}

void TargetRequirements::Add(TargetFeature feature, std::string path) {
  if (Has(feature)) return;
  uses_.push_back({feature, std::move(path)});
}

const std::string* TargetRequirements::FirstUse(TargetFeature feature) const {
  for (const Use& use : uses_) {
    if (use.feature == feature) return &use.path;
  }
  return nullptr;
}

absl::StatusOr<CudaTarget> TargetRequirements::Resolve(const CudaTarget& target) const {
  CudaTarget resolved = target;
  for (const Use& use : uses_) {
    const std::optional<CudaTarget> with = resolved.WithFeature(use.feature);
    if (!with.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          use.path, ": uses ", TargetFeatureName(use.feature), ", which exists on ",
          TargetFeatureWhere(use.feature), "; the target is ", target.ToString(),
          resolved == target ? "" : absl::StrCat(" (", resolved.ToString(), " for the rest)"),
          ". Compile for a target that has it (--arch), or run on a GPU that does"));
    }
    resolved = *with;
  }
  return resolved;
}

const TargetRequirements::Use* TargetRequirements::FirstVariantUse(
    const CudaTarget& target) const {
  for (const Use& use : uses_) {
    if (target.Has(use.feature)) continue;
    const std::optional<CudaTarget> with = target.WithFeature(use.feature);
    if (with.has_value() && with->variant() != target.variant()) return &use;
  }
  return nullptr;
}

}  // namespace warptrace

#include "jit/builder/kernel_validation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "jit/builder/cpp_snippet.h"
#include "jit/builder/kernel_tree_checks.h"
#include "jit/builder/loop_head.h"

namespace warptrace {
namespace {

constexpr uint32_t kMaxBlockThreads = 1024;
constexpr uint64_t kMaxStaticSharedBytes = 48 * 1024;
// The largest opt-in dynamic shared memory of any supported GPU (sm_90: 227 KiB).
constexpr uint64_t kMaxSharedBytes = 227 * 1024;
constexpr size_t kMaxSiteNameLength = 64;
// mbarrier.init's count: 1 .. 2^20 - 1.
constexpr uint32_t kMaxMbarrierArrivals = (1u << 20) - 1;

const std::set<std::string>& ReservedWords() {
  static const auto* words = new std::set<std::string>{
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "constexpr", "const_cast", "continue", "decltype", "default",
      "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "extern",
      "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
      "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected",
      "public", "register", "reinterpret_cast", "return", "short", "signed", "sizeof",
      "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned",
      "using", "virtual", "void", "volatile", "while",
      // CUDA built-ins and names the emitted source relies on.
      "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min", "max", "fmaf",
      "atomicAdd", "atomicMax", "atomicMin", "warptrace"};
  return *words;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Checks a C identifier the emitted source declares.
absl::Status CheckIdentifier(const std::string& name, const char* what,
                             const std::string& where) {
  if (name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what, " name is empty"));
  }
  const bool valid = !std::isdigit(static_cast<unsigned char>(name[0])) &&
                     std::all_of(name.begin(), name.end(), IsIdentChar);
  if (!valid) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", what, " name '", name,
        "' is not a C identifier (letters, digits and '_', not starting with a digit)"));
  }
  if (name.rfind("warptrace_", 0) == 0 || name.rfind("__", 0) == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", what, " name '", name,
        "' is reserved: names starting with 'warptrace_' or '__' belong to the generated code"));
  }
  if (ReservedWords().count(name) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": ", what, " name '", name, "' is a C++/CUDA keyword or built-in"));
  }
  return absl::OkStatus();
}

// Checks a name shown in the timeline (region, barrier, role).
absl::Status CheckSiteName(const std::string& name, const char* what, const std::string& where) {
  if (name.empty() || name.size() > kMaxSiteNameLength) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s name '%s' must have 1 to %d characters", where, what, name,
        kMaxSiteNameLength));
  }
  for (char c : name) {
    if (!IsIdentChar(c) && c != ' ' && c != '.' && c != ':' && c != '/' && c != '-') {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": ", what, " name '", name,
          "' may hold only letters, digits, spaces and _ . : / -"));
    }
  }
  if (name.front() == ' ' || name.back() == ' ') {
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what, " name '", name,
                                                   "' starts or ends with a space"));
  }
  return absl::OkStatus();
}

class Validator {
 public:
  explicit Validator(const Kernel& kernel) : kernel_(kernel) {}

  absl::Status Run() {
    const std::string root = absl::StrCat("kernel ", kernel_.name);
    RETURN_IF_ERROR(CheckIdentifier(kernel_.name, "kernel", root));
    // The kernel's own record site is named after the kernel.
    site_kinds_[kernel_.name] = {"kernel site", root};
    for (const KernelParam& p : kernel_.params) {
      RETURN_IF_ERROR(Declare(p.name, "parameter", root));
    }
    for (const auto& [name, value] : kernel_.constants) {
      RETURN_IF_ERROR(Declare(name, "constant", root));
    }
    for (const SharedArrayDecl& a : kernel_.shared_arrays) {
      // A statement's own __shared__ array is scoped by C++, like its other locals.
      if (!a.in_statement) RETURN_IF_ERROR(Declare(a.name, "shared array", root));
    }
    if (!kernel_.dynamic_shared.type.empty()) {
      RETURN_IF_ERROR(Declare(kernel_.dynamic_shared.name, "dynamic shared array", root));
    }
    for (const PhaseBarrierDecl& b : kernel_.phase_barriers) {
      RETURN_IF_ERROR(Declare(b.name, "phase barrier array", root));
      if (b.size == 0 || b.arrivals == 0 || b.arrivals > kMaxMbarrierArrivals) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: phase barrier array '%s' has %d elements of %d arrivals; it needs at least 1 "
            "element and 1 to %d arrivals per phase",
            root, b.name, b.size, b.arrivals, kMaxMbarrierArrivals));
      }
    }
    RETURN_IF_ERROR(CheckLaunchShape(root));
    if (kernel_.body.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          root, ": the kernel is empty; add statements (Stmt) or constructs to its body"));
    }
    RETURN_IF_ERROR(CheckBody(kernel_.body));
    return CheckKernelTree(kernel_.body);
  }

 private:
  absl::Status Declare(const std::string& name, const char* what, const std::string& where) {
    RETURN_IF_ERROR(CheckIdentifier(name, what, where));
    for (const auto& [declared, kind] : scope_) {
      if (declared == name) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", what, " name '", name,
                                                       "' clashes with the ", kind, " '",
                                                       name, "'"));
      }
    }
    scope_.emplace_back(name, what);
    return absl::OkStatus();
  }

  // KernelBuilder::Cluster's shape: every dimension >= 1 and dividing the grid's, at most 8
  // CTAs (CUDA's portable cluster size) or 16 with the non-portable opt-in (the most any
  // GPU allows: CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED).
  absl::Status CheckCluster() const {
    if (kernel_.cluster_path.empty()) return absl::OkStatus();
    const Dim3& c = kernel_.cluster;
    const Dim3& g = kernel_.grid;
    const std::string& path = kernel_.cluster_path;
    if (c.Count() == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": every dimension of a cluster must be >= 1"));
    }
    if (g.x % c.x != 0 || g.y % c.y != 0 || g.z % c.z != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the cluster shape must divide the grid (%d,%d,%d) in every dimension", path,
          g.x, g.y, g.z));
    }
    const uint64_t limit = kernel_.non_portable_cluster ? 16 : 8;
    if (c.Count() > limit) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d CTAs per cluster exceed %s", path, c.Count(),
          kernel_.non_portable_cluster
              ? "16, the most any GPU allows"
              : "8, the portable cluster size (up to 16 run on H100/H200 with "
                "Cluster(shape, ClusterSize::kNonPortable))"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckLaunchShape(const std::string& root) {
    const Dim3& g = kernel_.grid;
    const Dim3& b = kernel_.block;
    if (g.Count() == 0 || b.Count() == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: grid (%d,%d,%d) and block (%d,%d,%d) need every dimension >= 1", root, g.x, g.y,
          g.z, b.x, b.y, b.z));
    }
    if (b.Count() > kMaxBlockThreads) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: block (%d,%d,%d) has %d threads; CUDA allows at most %d", root, b.x, b.y, b.z,
          b.Count(), kMaxBlockThreads));
    }
    RETURN_IF_ERROR(CheckCluster());
    const uint64_t static_bytes = kernel_.StaticSharedBytes();
    if (static_bytes > kMaxStaticSharedBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: static shared arrays take %d bytes; CUDA allows %d; use DynamicShared for more",
          root, static_bytes, kMaxStaticSharedBytes));
    }
    if (static_bytes + kernel_.dynamic_shared.bytes > kMaxSharedBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %d static + %d dynamic shared bytes exceed the %d bytes of any supported GPU",
          root, static_bytes, kernel_.dynamic_shared.bytes, kMaxSharedBytes));
    }
    return absl::OkStatus();
  }

  absl::Status CheckSiteKind(const std::string& name, const std::string& kind,
                             const std::string& where) {
    auto [it, inserted] = site_kinds_.emplace(name, std::make_pair(kind, where));
    if (!inserted && it->second.first != kind) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the name '", name, "' is used as a ", kind, " here but as a ",
          it->second.first, " at ", it->second.second,
          "; a name means one kind of record site, so rename one of them"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckBody(const std::vector<KernelNode>& body) {
    for (size_t i = 0; i < body.size(); ++i) {
      if (i > 0 && body[i - 1].kind == KernelNode::Kind::kReturn) {
        return absl::InvalidArgumentError(absl::StrCat(
            body[i].path, ": comes after the return at ", body[i - 1].path,
            " and can never run; Return() must be the last thing in its body"));
      }
      RETURN_IF_ERROR(CheckNode(body[i]));
    }
    return absl::OkStatus();
  }

  absl::Status CheckNode(const KernelNode& node) {
    switch (node.kind) {
      case KernelNode::Kind::kStatement:
        return CheckStatement(node);
      case KernelNode::Kind::kRegion: {
        RETURN_IF_ERROR(CheckSiteName(node.text, "region", node.path));
        RETURN_IF_ERROR(CheckSiteKind(node.text, "region", node.path));
        if (std::find(regions_.begin(), regions_.end(), node.text) != regions_.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": region '", node.text,
              "' is nested inside a region of the same name; give the inner one its own name"));
        }
        regions_.push_back(node.text);
        absl::Status status = CheckBody(node.body);
        regions_.pop_back();
        return status;
      }
      case KernelNode::Kind::kLoop: {
        RETURN_IF_ERROR(CheckLoopCount(node));
        RETURN_IF_ERROR(CheckSiteKind(absl::StrCat("loop ", node.text), "loop body", node.path));
        const size_t scope_size = scope_.size();
        RETURN_IF_ERROR(Declare(node.text, "loop variable", node.path));
        absl::Status status = CheckBody(node.body);
        scope_.resize(scope_size);
        return status;
      }
      case KernelNode::Kind::kIf: {
        if (node.text.find_first_not_of(" \t\n") == std::string::npos) {
          return absl::InvalidArgumentError(absl::StrCat(node.path, ": empty if condition"));
        }
        ++if_depth_;
        if (node.uniform != Uniform::kBlock) divergent_ifs_.push_back(&node);
        if (node.uniform == Uniform::kThread) thread_divergent_ifs_.push_back(&node);
        absl::Status status = CheckBody(node.body);
        if (status.ok()) status = CheckBody(node.else_body);
        if (node.uniform == Uniform::kThread) thread_divergent_ifs_.pop_back();
        if (node.uniform != Uniform::kBlock) divergent_ifs_.pop_back();
        --if_depth_;
        return status;
      }
      case KernelNode::Kind::kNamedBarrier:
        return CheckNamedBarrier(node);
      case KernelNode::Kind::kArrive:
        return CheckArrive(node);
      case KernelNode::Kind::kPhaseWait:
        RETURN_IF_ERROR(FindBarrierElement(node.text, node.index, node.path).status());
        return CheckPhaseGiven(node);
      case KernelNode::Kind::kAsyncCopy:
        return CheckAsyncCopy(node);
      case KernelNode::Kind::kAsyncWait:
        return CheckGroupWait(node, "WaitAsyncCopies", "cp.async.wait_group");
      case KernelNode::Kind::kMmaGroup:
        return CheckMmaGroup(node);
      case KernelNode::Kind::kMmaWait:
        RETURN_IF_ERROR(CheckGroupWait(node, "WaitMmaGroups", "wgmma.wait_group"));
        return CheckWarpgroupWide(node, "WaitMmaGroups (wgmma.wait_group)");
      case KernelNode::Kind::kSetMaxRegisters:
        return CheckSetMaxRegisters(node);
      case KernelNode::Kind::kTmaStore:
        return CheckTmaStore(node);
      case KernelNode::Kind::kTmaStoreWait:
        return CheckGroupWait(node, "WaitTmaStores", "cp.async.bulk.wait_group");
      case KernelNode::Kind::kClusterBarrier:
        if (kernel_.cluster_path.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": a cluster barrier needs the kernel's cluster shape: call "
                         "Cluster({x, y, z}) on the builder"));
        }
        RETURN_IF_ERROR(CheckSiteName(node.text, "cluster barrier", node.path));
        return CheckSiteKind(node.text, "cluster barrier", node.path);
      case KernelNode::Kind::kRoles:
        return CheckRoles(node);
      case KernelNode::Kind::kRole:
        return absl::InternalError(absl::StrCat(node.path, ": role outside a role split"));
      case KernelNode::Kind::kBarrier:
        RETURN_IF_ERROR(CheckSiteName(node.text, "barrier", node.path));
        if (!role_.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": a barrier inside role '", role_,
              "' would deadlock: only that role's threads arrive at it; put the barrier "
              "after the role split"));
        }
        RETURN_IF_ERROR(CheckBarrierUniform(node.path, "the barrier"));
        return CheckSiteKind(node.text, "barrier", node.path);
      case KernelNode::Kind::kReturn:
        if (node.return_scope == ReturnScope::kBlock && !role_.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": a block-wide return inside role '", role_,
              "' cannot be: only that role's threads take it; use Return() (ReturnScope::kThread)"));
        }
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status CheckNamedBarrier(const KernelNode& node) {
    RETURN_IF_ERROR(CheckSiteName(node.text, "barrier", node.path));
    if (node.barrier_id < 1 || node.barrier_id > 15) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": named barrier id ", node.barrier_id,
          " is outside 1..15 (0 is __syncthreads'; the GPU has 16)"));
    }
    if (node.threads == 0 || node.threads % 32 != 0 ||
        node.threads > kernel_.ThreadsPerBlock()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: named barrier %d for %d threads; the count must be a positive multiple of 32 "
          "(whole warps arrive) and at most the block's %d threads",
          node.path, node.barrier_id, node.threads, kernel_.ThreadsPerBlock()));
    }
    if (!role_.empty() && if_depth_ == 0 && node.threads < role_threads_) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: all %d threads of role '%s' reach named barrier %d, but it completes after "
          "%d; the extra warps would start its next generation: count all %d threads, or let "
          "only some warps reach it (inside an If)",
          node.path, role_threads_, role_, node.barrier_id, node.threads, role_threads_));
    }
    return CheckSiteKind(node.text, "barrier", node.path);
  }

  // The array `name` and, when `index` is a literal, checks it is inside.
  absl::StatusOr<const PhaseBarrierDecl*> FindBarrierElement(const std::string& name,
                                                              const std::string& index,
                                                              const std::string& where) {
    const PhaseBarrierDecl* decl = kernel_.FindPhaseBarriers(name);
    if (decl == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": no phase barrier array '", name,
          "' is declared; declare it with PhaseBarriers(name, size, arrivals)"));
    }
    const Expr e(index);
    if (index.empty() ||
        (e.is_literal() && (e.literal() < 0 || e.literal() >= int64_t{decl->size}))) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": index ", index.empty() ? "(empty)" : index,
          " is outside phase barrier array '", name, "' of ", decl->size,
          " elements; use 0..", decl->size - 1));
    }
    return decl;
  }

  // An arrival's or a wait's phase: the payload that links them (a wait would not compile
  // without it).
  static absl::Status CheckPhaseGiven(const KernelNode& node) {
    if (!node.phase.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        node.path, node.kind == KernelNode::Kind::kArrive ? ": an arrival" : ": a phase wait",
        " needs its phase number (e.g. \"k / stages\")"));
  }

  absl::Status CheckArrive(const KernelNode& node) {
    ASSIGN_OR_RETURN(const PhaseBarrierDecl* decl,
                     FindBarrierElement(node.text, node.index, node.path));
    RETURN_IF_ERROR(CheckPhaseGiven(node));
    if (!node.cta.empty() && kernel_.cluster_path.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": a remote arrival on '", node.text,
          "' needs the kernel's cluster shape: call Cluster({x, y, z}) on the builder"));
    }
    const uint32_t stride = ArriveByStride(node.arrive_by);
    if (stride == 0) return absl::OkStatus();
    const uint64_t all = role_.empty() ? kernel_.ThreadsPerBlock() : role_threads_;
    const std::string who =
        role_.empty() ? "the block" : absl::StrCat("role '", role_, "'");
    const char* unit = stride == 128 ? "warpgroup" : "warp";
    if (stride > 1 && all % stride != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: one thread per %s of %s arrives on '%s', but %s has %d threads, not a whole "
          "number of %ss",
          node.path, unit, who, node.text, who, all, unit));
    }
    if (if_depth_ > 0) return absl::OkStatus();
    // Every thread (warpgroup, warp) of the role (or block) arrives: its count must divide
    // into phases.
    const uint64_t threads = all / stride;
    if (threads > decl->arrivals || decl->arrivals % threads != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s of %s (%d threads) arrives on '%s', but its phases complete after "
          "%d arrivals, %s; declare the array with a count of %d (or a multiple of it), or "
          "arrive with ArriveBy::kOneThread",
          node.path,
          stride == 1 ? "every thread" : absl::StrCat("one thread per ", unit), who, threads,
          node.text, decl->arrivals,
          threads > decl->arrivals ? "fewer than arrive" : "not a multiple of them", threads));
    }
    return absl::OkStatus();
  }

  // A wait leaving `async_pending` of the thread's most recent groups in flight: the
  // instruction's immediate takes 0..7.
  static absl::Status CheckGroupWait(const KernelNode& node, const char* call,
                                     const char* instruction) {
    if (node.async_pending <= 7) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(node.path, ": ", call, "(", node.async_pending,
                                                   ") leaves more groups in flight than ",
                                                   instruction, " allows (0..7)"));
  }

  absl::Status CheckSetMaxRegisters(const KernelNode& node) {
    if (node.registers < 24 || node.registers > 256 || node.registers % 8 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": SetMaxRegisters(", node.registers,
          ") is outside what setmaxnreg accepts: 24..256 registers, a multiple of 8"));
    }
    return CheckWarpgroupWide(node, "SetMaxRegisters (setmaxnreg)");
  }

  // A warpgroup-wide instruction (wgmma, setmaxnreg) must run in whole warpgroups: in a
  // role by warpgroup or outside roles (a block of whole warpgroups), never in a role by
  // warp (a warp of its warpgroup would be missing).
  absl::Status CheckWarpgroupWide(const KernelNode& node, const char* what) {
    if (!thread_divergent_ifs_.empty()) {
      const KernelNode& cond = *thread_divergent_ifs_.back();
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": ", what, " is a warpgroup-wide instruction under `if (", cond.text,
          ")` at ", cond.path,
          ", whose condition may differ between the threads of a warpgroup: all 128 threads "
          "must execute it together (undefined behaviour on a GPU otherwise); move it out of "
          "the if or, when every thread of a warpgroup takes the same side, write "
          "If(condition, body, Uniform::kWarpgroup)"));
    }
    if (!role_.empty() && role_axis_ == RoleAxis::kWarp && role_threads_ % 128 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": ", what, " is a warpgroup-wide instruction, but role '", role_,
          "' is ", role_threads_ / 32,
          " warp(s), not whole warpgroups; split the block by warpgroup (RoleAxis::kWarpgroup)"));
    }
    if (role_.empty() && kernel_.ThreadsPerBlock() % 128 != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": ", what, " is a warpgroup-wide instruction, but the block's ",
          kernel_.ThreadsPerBlock(), " threads are not whole warpgroups (128 threads each)"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckMmaGroup(const KernelNode& node) {
    RETURN_IF_ERROR(CheckSiteName(node.text, "mma group", node.path));
    RETURN_IF_ERROR(CheckSiteKind(node.text, "mma group", node.path));
    RETURN_IF_ERROR(CheckWarpgroupWide(node, "MmaGroup (wgmma)"));
    if (in_mma_group_) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": mma groups do not nest; commit the outer group first"));
    }
    for (const KernelNode& n : node.body) {
      if (n.kind != KernelNode::Kind::kStatement) {
        return absl::InvalidArgumentError(absl::StrCat(
            n.path, ": an mma group holds the wgmma instructions only (raw statements); put ",
            KernelNodeKindName(n.kind), "s before or after it"));
      }
    }
    in_mma_group_ = true;
    absl::Status status = CheckBody(node.body);
    in_mma_group_ = false;
    return status;
  }

  absl::Status CheckAsyncCopy(const KernelNode& node) {
    const AsyncCopySpec& c = node.copy;
    RETURN_IF_ERROR(CheckSiteName(c.name, "async copy", node.path));
    RETURN_IF_ERROR(CheckSiteKind(c.name, "async copy", node.path));
    if (!c.multicast_mask.empty()) {
      if (!c.tma()) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.path, ": async copy '", c.name,
            "' has a multicast mask but no tensor map: only TMA loads multicast"));
      }
      if (kernel_.cluster_path.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.path, ": async copy '", c.name,
            "' multicasts to a CTA mask but the kernel has no cluster shape: call "
            "Cluster({x, y, z}) on the builder"));
      }
    }
    if (c.tma()) return CheckTmaCopy(node);
    if (c.dst.empty() || c.src.empty() || c.src_row_stride_bytes.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": async copy '", c.name,
          "' needs a destination and a source pointer and a source row stride "
          "(AsyncCopySpec::dst, src, src_row_stride_bytes)"));
    }
    if (c.rows == 0 || c.row_bytes == 0 || c.row_bytes % 16 != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: async copy '%s' of %d rows x %d bytes; it needs at least 1 row of a positive "
          "multiple of 16 bytes (the copy granularity)",
          node.path, c.name, c.rows, c.row_bytes));
    }
    if (c.barrier.empty()) return absl::OkStatus();
    if (c.barrier_phase.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": bulk copy '", c.name, "' completes on '", c.barrier,
          "' but names no phase (AsyncCopySpec::barrier_phase, e.g. \"k / stages\")"));
    }
    return FindBarrierElement(c.barrier, c.barrier_index, node.path).status();
  }

  absl::Status CheckTensorMapParam(const KernelNode& node) const {
    const AsyncCopySpec& c = node.copy;
    for (const KernelParam& p : kernel_.params) {
      if (p.name == c.tensor_map && p.ValueType() == "CUtensorMap") return absl::OkStatus();
    }
    return absl::InvalidArgumentError(absl::StrCat(
        node.path, ": TMA ", node.kind == KernelNode::Kind::kTmaStore ? "store" : "copy", " '",
        c.name, "' names tensor map '", c.tensor_map,
        "', which is not a parameter of type CUtensorMap; declare it with "
        "Param(\"CUtensorMap\", \"", c.tensor_map, "\")"));
  }

  absl::Status CheckTmaStore(const KernelNode& node) {
    const AsyncCopySpec& c = node.copy;
    RETURN_IF_ERROR(CheckSiteName(c.name, "tma store", node.path));
    RETURN_IF_ERROR(CheckSiteKind(c.name, "async copy", node.path));
    RETURN_IF_ERROR(CheckTensorMapParam(node));
    if (c.src.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TMA store '", c.name, "' needs a shared-memory source (AsyncCopySpec::src)"));
    }
    if (c.coords.size() != 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: TMA store '%s' has %d coordinates; a 2-D store takes 2 (innermost first)",
          node.path, c.name, c.coords.size()));
    }
    return absl::OkStatus();
  }

  absl::Status CheckTmaCopy(const KernelNode& node) {
    const AsyncCopySpec& c = node.copy;
    RETURN_IF_ERROR(CheckTensorMapParam(node));
    const KernelParam* map = nullptr;
    for (const KernelParam& p : kernel_.params) {
      if (p.name == c.tensor_map) map = &p;
    }
    if (map == nullptr || map->ValueType() != "CUtensorMap") {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TMA copy '", c.name, "' names tensor map '", c.tensor_map,
          "', which is not a parameter of type CUtensorMap; declare it with "
          "Param(\"CUtensorMap\", \"", c.tensor_map, "\")"));
    }
    if (c.dst.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TMA copy '", c.name, "' needs a shared-memory destination "
          "(AsyncCopySpec::dst)"));
    }
    if ((c.coords.size() != 2 && c.coords.size() != 3) || c.box.size() != c.coords.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: TMA copy '%s' has %d coordinates and a box of %d dimensions; give 2 or 3 of "
          "each (innermost first), as the tensor map's rank",
          node.path, c.name, c.coords.size(), c.box.size()));
    }
    for (size_t i = 0; i < c.box.size(); ++i) {
      if (c.box[i] == 0 || c.box[i] > 256) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: TMA copy '%s': box dimension %d is %d; TMA boxes are 1..256 elements per "
            "dimension",
            node.path, c.name, i, c.box[i]));
      }
      if (c.coords[i].find_first_not_of(" \t\n") == std::string::npos) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: TMA copy '%s': coordinate %d is empty", node.path, c.name, i));
      }
    }
    if (c.element_bytes != 1 && c.element_bytes != 2 && c.element_bytes != 4 &&
        c.element_bytes != 8) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: TMA copy '%s': element_bytes %d; expected 1, 2, 4 or 8", node.path, c.name,
          c.element_bytes));
    }
    if (c.box[0] * c.element_bytes % 16 != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: TMA copy '%s': the box's inner dimension is %d x %d = %d bytes, not a multiple "
          "of 16 (a TMA requirement)",
          node.path, c.name, c.box[0], c.element_bytes, c.box[0] * c.element_bytes));
    }
    if (c.barrier.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TMA copy '", c.name, "' completes on no phase barrier; set "
          "AsyncCopySpec::barrier (and barrier_index, barrier_phase)"));
    }
    if (c.barrier_phase.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TMA copy '", c.name, "' completes on '", c.barrier,
          "' but names no phase (AsyncCopySpec::barrier_phase, e.g. \"k / stages\")"));
    }
    return FindBarrierElement(c.barrier, c.barrier_index, node.path).status();
  }

  absl::Status CheckStatement(const KernelNode& node) {
    absl::StatusOr<SnippetFacts> facts = ScanSnippet(node.text);
    if (!facts.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.path, ": a raw statement has an ", facts.status().message()));
    }
    if (facts->returns_from_kernel) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": a raw statement may not return (the profiler epilogue would be "
                     "skipped); use Return()"));
    }
    if (!facts->escaping_jumps.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": `", facts->escaping_jumps.front(),
          "` jumps out of the raw statement, past the exits the builder records for the "
          "constructs around it (an unpaired event at run time); keep jumps inside the "
          "statement (its own loop or switch, or a label it defines) and change the "
          "builder's control flow with If() or Return()"));
    }
    if (!facts->unbalanced.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": a raw statement has unbalanced brackets (", facts->unbalanced,
          "); it is pasted into the builder's block structure, so it must close what it "
          "opens and open what it closes"));
    }
    if (!facts->conditional_block_barrier.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": ", facts->conditional_block_barrier,
          " is under an if/else or switch of the raw statement: only the threads that take "
          "that branch would arrive (a deadlock, undefined behaviour on a GPU); use Barrier() "
          "outside the branch, or If(condition, body, Uniform::kBlock) around it when every "
          "thread of the block takes the same branch"));
    }
    if (!facts->block_barrier.empty()) {
      RETURN_IF_ERROR(CheckBarrierUniform(
          node.path, absl::StrCat("the raw statement's ", facts->block_barrier)));
    }
    if (facts->declares_extern_shared) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": declare dynamic shared memory with DynamicShared(), not extern "
                     "__shared__ (the host backend and the plan's budget need to see it)"));
    }
    return absl::OkStatus();
  }

  // A block barrier at `path` under an If not declared block-uniform: the threads that take
  // the other side never arrive.
  absl::Status CheckBarrierUniform(const std::string& path, const std::string& what) const {
    if (divergent_ifs_.empty()) return absl::OkStatus();
    const KernelNode& cond = *divergent_ifs_.back();
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", what, " is under `if (", cond.text, ")` at ", cond.path,
        ", whose condition may differ between the block's threads: the threads that take "
        "the other side would never arrive (a deadlock, undefined behaviour on a GPU); move "
        "the barrier out of the if or, when every thread of the block takes the same side, "
        "write If(condition, body, Uniform::kBlock)"));
  }

  absl::Status CheckLoopCount(const KernelNode& node) {
    if (!node.condition.empty() || !node.update.empty()) return CheckLoopHeadTrips(node);
    if (node.trip.kind() == TripCount::Kind::kUnknown) return absl::OkStatus();
    // Only literal bounds can be checked.
    int64_t b = 0, e = 0, s = 0;
    auto parse = [](const std::string& text, int64_t* out) {
      Expr expr(text);
      if (!expr.is_literal()) return false;
      *out = expr.literal();
      return true;
    };
    if (!parse(node.begin, &b) || !parse(node.end, &e) || !parse(node.step, &s)) {
      return absl::OkStatus();
    }
    if (s <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.path, ": loop step ", s, " must be positive"));
    }
    const uint64_t actual = e > b ? static_cast<uint64_t>((e - b + s - 1) / s) : 0;
    if (node.trip.kind() == TripCount::Kind::kExact && actual != node.trip.count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TripCount::Exact(", node.trip.count(), ") but the bounds [", b, ", ",
          e, ") step ", s, " run ", actual, " iterations"));
    }
    if (node.trip.kind() == TripCount::Kind::kUpperBound && actual > node.trip.count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": TripCount::UpperBound(", node.trip.count(), ") but the bounds [", b,
          ", ", e, ") step ", s, " run ", actual, " iterations"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckRoles(const KernelNode& node) {
    if (!role_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": role splits do not nest (already inside role '", role_,
          "'); split once, by warp if you need finer roles"));
    }
    const uint32_t unit = RoleAxisThreads(node.axis);
    const uint64_t threads = kernel_.ThreadsPerBlock();
    if (threads % unit != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the block's %d threads are not a whole number of %ss (%d threads each); use "
          "a block of %d or %d threads",
          node.path, threads, RoleAxisName(node.axis), unit, threads / unit * unit,
          (threads / unit + 1) * unit));
    }
    if (node.roles.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(node.path, ": a role split has no roles"));
    }
    uint64_t covered = 0;
    std::set<std::string> names;
    for (const KernelNode& role : node.roles) {
      RETURN_IF_ERROR(CheckSiteName(role.text, "role", role.path));
      if (!names.insert(role.text).second) {
        return absl::InvalidArgumentError(
            absl::StrCat(role.path, ": role '", role.text, "' appears twice in the split"));
      }
      if (role.count == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            role.path, ": role '", role.text, "' has 0 ", RoleAxisName(node.axis), "s"));
      }
      covered += role.count;
    }
    if (covered * unit != threads) {
      std::vector<std::string> parts;
      for (const KernelNode& role : node.roles) {
        parts.push_back(absl::StrCat(role.text, " ", role.count));
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: the roles (%s) cover %d %ss = %d threads but the block has %d threads (%d "
          "%ss); make the block %d threads or change the role counts",
          node.path, absl::StrJoin(parts, ", "), covered, RoleAxisName(node.axis),
          covered * unit, threads, threads / unit, RoleAxisName(node.axis), covered * unit));
    }
    for (const KernelNode& role : node.roles) {
      const size_t scope_size = scope_.size();
      if (!role.index_var.empty()) {
        RETURN_IF_ERROR(Declare(role.index_var, "role index variable", role.path));
      }
      role_ = role.text;
      role_axis_ = node.axis;
      role_threads_ = uint64_t{role.count} * unit;
      absl::Status status = CheckBody(role.body);
      role_.clear();
      role_threads_ = 0;
      scope_.resize(scope_size);
      RETURN_IF_ERROR(status);
    }
    return absl::OkStatus();
  }

  const Kernel& kernel_;
  std::vector<std::pair<std::string, std::string>> scope_;  // (name, what) in scope
  std::map<std::string, std::pair<std::string, std::string>> site_kinds_;  // name -> kind, where
  std::vector<std::string> regions_;  // enclosing region names
  std::string role_;                  // enclosing role, if any
  uint64_t role_threads_ = 0;         // its threads
  RoleAxis role_axis_ = RoleAxis::kWarpgroup;  // its split's axis
  bool in_mma_group_ = false;
  int if_depth_ = 0;                  // enclosing ifs (who arrives depends on data)
  std::vector<const KernelNode*> divergent_ifs_;  // enclosing ifs not Uniform::kBlock
  std::vector<const KernelNode*> thread_divergent_ifs_;  // enclosing Uniform::kThread ifs
};

}  // namespace

absl::Status ValidateKernel(const Kernel& kernel) { return Validator(kernel).Run(); }

}  // namespace warptrace

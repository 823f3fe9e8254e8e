#include "jit/builder/kernel_builder.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "jit/builder/cpp_snippet.h"
#include "jit/builder/kernel_validation.h"
#include "jit/builder/element_types.h"
#include "jit/target/cuda_target.h"

namespace warptrace {
namespace {

// Whether C++ text calls (names) a device primitive of warptrace_primitives.cuh: an
// identifier token warptrace_* (comments and literals do not count).
bool NamesPrimitive(const std::string& code) {
  absl::StatusOr<std::vector<CppToken>> tokens = LexCpp(code);
  if (!tokens.ok()) return false;  // validation reported it
  for (const CppToken& t : *tokens) {
    if (t.kind == CppToken::Kind::kIdentifier && absl::StartsWith(t.text, "warptrace_")) {
      return true;
    }
  }
  return false;
}

// The path of the first raw statement naming a device primitive (Kernel::primitives_use), or
// "".
std::string FindPrimitivesUse(const std::vector<KernelNode>& body) {
  const KernelNode* use = FindNode(body, [](const KernelNode& node) {
    return node.kind == KernelNode::Kind::kStatement && NamesPrimitive(node.text);
  });
  return use != nullptr ? use->path : "";
}

// The target features the primitives a raw statement calls need (identifier tokens:
// comments and literals do not count), each recorded at `path`.
void AddPrimitiveRequirements(const std::string& code, const std::string& path,
                              TargetRequirements& requirements) {
  absl::StatusOr<std::vector<CppToken>> tokens = LexCpp(code);
  if (!tokens.ok()) return;  // validation reported it
  for (const CppToken& t : *tokens) {
    if (t.kind != CppToken::Kind::kIdentifier) continue;
    const absl::string_view name = t.text;
    if (absl::StartsWith(name, "warptrace_wgmma_") && name != "warptrace_wgmma_desc") {
      requirements.Add(TargetFeature::kWgmma, path);
    } else if (absl::StartsWith(name, "warptrace_setmaxnreg_")) {
      requirements.Add(TargetFeature::kSetMaxNReg, path);
    } else if (absl::StartsWith(name, "warptrace_tma_") && absl::EndsWith(name, "_multicast")) {
      requirements.Add(TargetFeature::kMulticast, path);
    } else if (absl::StartsWith(name, "warptrace_tma_") ||
               name == "warptrace_prefetch_tensormap") {
      requirements.Add(TargetFeature::kTma, path);
    } else if (absl::StartsWith(name, "warptrace_bulk_") ||
               absl::EndsWith(name, "_expect_tx") || name == "warptrace_mbarrier_complete_tx" ||
               name == "warptrace_mbarrier_try_wait_parity") {
      requirements.Add(TargetFeature::kBulkCopy, path);
    } else if (absl::StartsWith(name, "warptrace_cluster_") ||
               absl::StrContains(name, "_shared_cluster_") ||
               name == "warptrace_mbarrier_arrive_cluster" ||
               name == "warptrace_fence_acq_rel_cluster") {
      requirements.Add(TargetFeature::kClusters, path);
    } else if (absl::StartsWith(name, "warptrace_cp_async")) {
      requirements.Add(TargetFeature::kCpAsync, path);
    } else if (absl::StartsWith(name, "warptrace_mbarrier_")) {
      requirements.Add(TargetFeature::kMbarrier, path);
    }
  }
}

// What a construct or raw statement requires of the target (Kernel::requirements; the
// kernel's nodes are visited in preorder).
void AddRequirements(const KernelNode& node, TargetRequirements& requirements) {
  switch (node.kind) {
    case KernelNode::Kind::kStatement:
      AddPrimitiveRequirements(node.text, node.path, requirements);
      break;
    case KernelNode::Kind::kMmaGroup:
    case KernelNode::Kind::kMmaWait:
      requirements.Add(TargetFeature::kWgmma, node.path);
      break;
    case KernelNode::Kind::kSetMaxRegisters:
      requirements.Add(TargetFeature::kSetMaxNReg, node.path);
      break;
    case KernelNode::Kind::kTmaStore:
    case KernelNode::Kind::kTmaStoreWait:
      requirements.Add(TargetFeature::kTma, node.path);
      break;
    case KernelNode::Kind::kAsyncCopy:
      if (!node.copy.multicast_mask.empty()) {
        requirements.Add(TargetFeature::kClusters, node.path);
        requirements.Add(TargetFeature::kMulticast, node.path);
      }
      requirements.Add(node.copy.tma()               ? TargetFeature::kTma
                       : !node.copy.barrier.empty() ? TargetFeature::kBulkCopy
                                                    : TargetFeature::kCpAsync,
                       node.path);
      break;
    case KernelNode::Kind::kAsyncWait:
      requirements.Add(TargetFeature::kCpAsync, node.path);
      break;
    case KernelNode::Kind::kArrive:
      requirements.Add(TargetFeature::kMbarrier, node.path);
      if (!node.cta.empty()) requirements.Add(TargetFeature::kClusters, node.path);
      if (!node.tx_bytes.empty()) requirements.Add(TargetFeature::kBulkCopy, node.path);
      break;
    case KernelNode::Kind::kPhaseWait:
      requirements.Add(TargetFeature::kMbarrier, node.path);
      break;
    case KernelNode::Kind::kClusterBarrier:
      requirements.Add(TargetFeature::kClusters, node.path);
      break;
    case KernelNode::Kind::kRegion:
    case KernelNode::Kind::kLoop:
    case KernelNode::Kind::kIf:
    case KernelNode::Kind::kRoles:
    case KernelNode::Kind::kRole:
    case KernelNode::Kind::kBarrier:
    case KernelNode::Kind::kReturn:
    case KernelNode::Kind::kNamedBarrier:
      break;
  }
}

bool UsesSetMaxRegisters(const std::vector<KernelNode>& body) {
  return FindNode(body, [](const KernelNode& node) {
           return node.kind == KernelNode::Kind::kSetMaxRegisters;
         }) != nullptr;
}

void AssignOrdinals(std::vector<KernelNode>& body, uint32_t& next) {
  ForEachNode(body, [&next](KernelNode& node) { node.ordinal = next++; });
}

KernelNode NamedBarrierNode(std::string name, uint32_t id, uint32_t threads, bool arrive,
                            BarrierRecord record) {
  KernelNode node;
  node.kind = KernelNode::Kind::kNamedBarrier;
  node.text = std::move(name);
  node.barrier_id = id;
  node.threads = threads;
  node.named_arrive = arrive;
  node.barrier_record = record;
  return node;
}

// An arrival on, or a wait on, element `index` of phase barrier array `barriers`.
KernelNode PhaseBarrierNode(KernelNode::Kind kind, std::string barriers, const Expr& index,
                            const Expr& phase, ArriveBy by) {
  KernelNode node;
  node.kind = kind;
  node.text = std::move(barriers);
  node.index = index.text();
  node.phase = phase.text();
  node.arrive_by = by;
  return node;
}

}  // namespace

KernelBuilder::KernelBuilder(std::string name) { kernel_.name = std::move(name); }

void KernelBuilder::Fail(const std::string& message) {
  if (error_.empty()) error_ = absl::StrCat(Path(), ": ", message);
}

std::string KernelBuilder::Path() const {
  std::string path = absl::StrCat("kernel ", kernel_.name);
  for (const Frame& f : open_) {
    absl::StrAppend(&path, " > ", f.label);
    if (f.in_else) absl::StrAppend(&path, " > else");
  }
  return path;
}

std::vector<KernelNode>* KernelBuilder::CurrentBody(const char* what) {
  if (open_.empty()) return &kernel_.body;
  Frame& top = open_.back();
  if (top.node.kind == KernelNode::Kind::kRoles) {
    Fail(absl::StrCat("a ", what, " directly inside a role split; open a role first (BeginRole)"));
    return nullptr;
  }
  return top.in_else ? &top.node.else_body : &top.node.body;
}

void KernelBuilder::Append(KernelNode node) {
  std::vector<KernelNode>* body = CurrentBody(KernelNodeKindName(node.kind));
  if (body == nullptr) return;
  node.path = absl::StrCat(Path(), " > ", KernelNodeLabel(node, NodeLabelStyle::kPath));
  body->push_back(std::move(node));
}

void KernelBuilder::Open(KernelNode node) {
  if (node.kind == KernelNode::Kind::kRole) {
    if (open_.empty() || open_.back().node.kind != KernelNode::Kind::kRoles) {
      Fail(absl::StrCat("role '", node.text, "' outside a role split; call BeginRoles first"));
      return;
    }
  }
  std::vector<KernelNode>* body =
      node.kind == KernelNode::Kind::kRole ? nullptr : CurrentBody(KernelNodeKindName(node.kind));
  if (node.kind != KernelNode::Kind::kRole && body == nullptr) return;
  std::string label = KernelNodeLabel(node, NodeLabelStyle::kPath);
  // A second loop of one variable in one body gets "#2" in its path, so messages and site
  // names tell the two apart.
  if (node.kind == KernelNode::Kind::kLoop) {
    const auto same = std::count_if(body->begin(), body->end(), [&](const KernelNode& n) {
      return n.kind == KernelNode::Kind::kLoop && n.text == node.text;
    });
    if (same > 0) absl::StrAppend(&label, " #", same + 1);
  }
  node.path = absl::StrCat(Path(), " > ", label);
  open_.push_back(Frame{std::move(node), std::move(label), false});
}

bool KernelBuilder::Close(KernelNode::Kind kind, const char* what, const std::string& name) {
  if (open_.empty() || open_.back().node.kind != kind) {
    Fail(open_.empty()
             ? absl::StrCat("End", what, " with nothing open")
             : absl::StrCat("End", what, " while ", open_.back().label,
                            " is the innermost open construct; close it first"));
    return false;
  }
  if (!name.empty() && open_.back().node.text != name) {
    Fail(absl::StrCat("End", what, "(\"", name, "\") closes ", open_.back().label));
    return false;
  }
  Frame frame = std::move(open_.back());
  open_.pop_back();
  if (kind == KernelNode::Kind::kRole) {
    open_.back().node.roles.push_back(std::move(frame.node));
    return true;
  }
  std::vector<KernelNode>* body = CurrentBody(what);
  if (body != nullptr) body->push_back(std::move(frame.node));
  return true;
}

KernelBuilder& KernelBuilder::Param(std::string type, std::string name) {
  KernelParam param;
  param.type = NormalizeType(type);
  param.name = std::move(name);
  if (param.type == "CUtensorMap") {  // a TMA tensor map, 128 bytes by value
    param.size = 128;
  } else if (absl::StrContains(param.type, "CUtensorMap")) {
    Fail(absl::StrCat("parameter '", param.name, "' has type '", param.type,
                      "'; a tensor map parameter is declared Param(\"CUtensorMap\", name) (it "
                      "is emitted `const __grid_constant__ CUtensorMap name`; pass its address "
                      "to the TMA primitives)"));
    return *this;
  } else if (!param.type.empty() && param.type.back() == '*') {
    std::string base = param.type;
    while (!base.empty() && (base.back() == '*' || base.back() == ' ')) base.pop_back();
    base = KernelParam{base, "", 0, false}.ValueType();  // the element type without cv
    if (ScalarTypes().count(base) == 0 && base != "void") {
      Fail(absl::StrCat("parameter '", param.name, "' has pointer type '", param.type,
                        "' to an unknown element type '", base,
                        "'; use a pointer to a scalar type or void"));
      return *this;
    }
    param.is_pointer = true;
    param.size = 8;
  } else {
    // cv-qualifiers of a by-value scalar stay in the signature ("const int n").
    auto it = ScalarTypes().find(param.ValueType());
    if (it == ScalarTypes().end()) {
      Fail(absl::StrCat("parameter '", param.name, "' has unknown scalar type '", param.type,
                        "'; use int, unsigned int, long long, float, double, ... (optionally "
                        "const or volatile) or a pointer"));
      return *this;
    }
    param.size = it->second;
  }
  kernel_.params.push_back(std::move(param));
  return *this;
}

KernelBuilder& KernelBuilder::Grid(Dim3 grid) {
  kernel_.grid = grid;
  return *this;
}

KernelBuilder& KernelBuilder::Block(Dim3 block) {
  kernel_.block = block;
  return *this;
}

KernelBuilder& KernelBuilder::MinBlocksPerSm(uint32_t blocks) {
  if (blocks < 1 || blocks > 32) {
    Fail(absl::StrCat("MinBlocksPerSm(", blocks,
                      "): the resident blocks per SM the kernel is written for are 1..32"));
  }
  kernel_.min_blocks_per_sm = blocks;
  return *this;
}

KernelBuilder& KernelBuilder::SharedArray(std::string type, std::string name, uint64_t count) {
  return SharedArray(std::move(type), std::move(name), std::vector<uint64_t>{count});
}

KernelBuilder& KernelBuilder::SharedArray(std::string type, std::string name,
                                          std::vector<uint64_t> dims, uint32_t element_bytes) {
  type = NormalizeType(type);
  const std::string what = absl::StrCat("shared array '", name, "'");
  const bool type_name = !type.empty() && std::all_of(type.begin(), type.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == ' ' ||
           c == '<' || c == '>' || c == ',';
  });
  if (!type_name) {
    Fail(absl::StrCat(what, ": element type '", type, "' is not a type name"));
    return *this;
  }
  if (dims.empty()) {
    Fail(absl::StrCat(what, " has no dimensions; give its element count, e.g. {32}"));
    return *this;
  }
  const std::optional<uint32_t> known = KnownElementBytes(type);
  if (!known.has_value() && element_bytes == 0) {
    Fail(absl::StrCat(what, " has element type '", type, "', whose size the builder does not ",
                      "know; give it: SharedArray(\"", type, "\", \"", name, "\", dims, ",
                      "sizeof(", type, ")), checked by a static_assert in the kernel"));
    return *this;
  }
  if (known.has_value() && element_bytes != 0 && element_bytes != *known) {
    Fail(absl::StrCat(what, ": '", type, "' takes ", *known, " bytes, not ", element_bytes));
    return *this;
  }
  const uint32_t bytes = known.value_or(element_bytes);
  uint64_t count = 1;
  for (uint64_t d : dims) {
    if (d == 0) {
      Fail(absl::StrCat(what, dims.size() == 1 ? " has 0 elements" : " has a dimension of 0"));
      return *this;
    }
    if (count > std::numeric_limits<uint64_t>::max() / d / bytes) {
      Fail(absl::StrCat(what, ": its size overflows 64 bits"));
      return *this;
    }
    count *= d;
  }
  kernel_.shared_arrays.push_back(SharedArrayDecl{std::move(type), std::move(name), count, bytes,
                                                  std::move(dims), !known.has_value(),
                                                  /*in_statement=*/false, /*path=*/""});
  return *this;
}

KernelBuilder& KernelBuilder::DynamicShared(std::string type, std::string name,
                                            uint32_t bytes, uint32_t align) {
  type = NormalizeType(type);
  auto it = ScalarTypes().find(type);
  if (!kernel_.dynamic_shared.type.empty()) {
    Fail(absl::StrCat("dynamic shared memory declared twice ('",
                      kernel_.dynamic_shared.name, "' and '", name,
                      "'); a kernel has one dynamic shared array"));
  } else if (it == ScalarTypes().end()) {
    Fail(absl::StrCat("dynamic shared array '", name, "' has unknown element type '", type,
                      "'"));
  } else if (bytes == 0 || bytes % it->second != 0) {
    Fail(absl::StrCat("dynamic shared array '", name, "' of ", bytes,
                      " bytes is not a positive multiple of sizeof(", type, ")"));
  } else if (align < 16 || align > 1024 || (align & (align - 1)) != 0) {
    Fail(absl::StrCat("dynamic shared array '", name, "' asks for ", align,
                      "-byte alignment; give a power of two from 16 to 1024 (1024 for "
                      "128B-swizzled TMA boxes)"));
  } else {
    kernel_.dynamic_shared = DynamicSharedDecl{type, std::move(name), bytes, align};
  }
  return *this;
}

KernelBuilder& KernelBuilder::Constant(std::string name, int64_t value) {
  const bool fits_int = value >= std::numeric_limits<int32_t>::min() &&
                        value <= std::numeric_limits<int32_t>::max();
  const std::string code =
      fits_int ? absl::StrCat("constexpr int ", name, " = ", value, ";")
               : absl::StrCat("constexpr long long ", name, " = ", value, "LL;");
  std::string path = absl::StrCat("kernel ", kernel_.name, " > constant ", name);
  kernel_.constants.emplace_back(std::move(name), value);
  return AddPreamble(code, std::move(path));
}

KernelBuilder& KernelBuilder::Preamble(std::string code) {
  // Numbered among the Preamble calls alone (Constant's declarations are named by their
  // constant), so the only Preamble call is "preamble 1" whatever constants came first.
  const std::string prefix = absl::StrCat("kernel ", kernel_.name, " > preamble ");
  size_t number = 1;
  for (const PreambleDecl& p : kernel_.preamble) {
    if (absl::StartsWith(p.path, prefix)) ++number;
  }
  return AddPreamble(std::move(code), absl::StrCat(prefix, number));
}

KernelBuilder& KernelBuilder::AddPreamble(std::string code, std::string path) {
  absl::StatusOr<SnippetFacts> facts = ScanSnippet(code);
  if (!facts.ok()) {
    Fail(absl::StrCat(path, ": ", facts.status().message()));
    return *this;
  }
  if (!facts->unbalanced.empty()) {
    Fail(absl::StrCat(path, ": ", facts->unbalanced));
    return *this;
  }
  if (facts->declares_extern_shared) {
    Fail(absl::StrCat(path, ": declares extern shared memory; use DynamicShared()"));
    return *this;
  }
  absl::StatusOr<std::vector<CppToken>> tokens = LexCpp(code);
  if (tokens.ok()) {
    for (const CppToken& token : *tokens) {
      if (token.text == "__global__") {
        Fail(absl::StrCat(path, ": defines a __global__ function; a builder makes one kernel "
                          "(helpers are __device__ functions)"));
        return *this;
      }
      if (token.text == "__shared__") {
        Fail(absl::StrCat(path, ": declares __shared__ memory; use SharedArray() or "
                          "DynamicShared()"));
        return *this;
      }
    }
  }
  kernel_.preamble.push_back(PreambleDecl{std::move(code), path});
  return *this;
}

KernelBuilder& KernelBuilder::Stmt(std::string code) {
  KernelNode node;
  node.kind = KernelNode::Kind::kStatement;
  node.text = std::move(code);
  if (absl::StrContains(node.text, "__shared__")) {
    CountRawShared(node.text,
                   absl::StrCat(Path(), " > ", KernelNodeLabel(node, NodeLabelStyle::kPath)));
  }
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::Region(std::string name, const std::function<void()>& body) {
  BeginRegion(name);
  body();
  return EndRegion(name);
}

KernelBuilder& KernelBuilder::BeginRegion(std::string name) {
  KernelNode node;
  node.kind = KernelNode::Kind::kRegion;
  node.text = std::move(name);
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::EndRegion(std::string name) {
  Close(KernelNode::Kind::kRegion, "Region", name);
  return *this;
}

KernelBuilder& KernelBuilder::If(std::string condition,
                                 const std::function<void()>& then_body, Uniform uniform) {
  BeginIf(std::move(condition), uniform);
  then_body();
  return EndIf();
}

KernelBuilder& KernelBuilder::If(std::string condition, const std::function<void()>& then_body,
                                 const std::function<void()>& else_body, Uniform uniform) {
  BeginIf(std::move(condition), uniform);
  then_body();
  Else();
  else_body();
  return EndIf();
}

KernelBuilder& KernelBuilder::BeginIf(std::string condition, Uniform uniform) {
  KernelNode node;
  node.kind = KernelNode::Kind::kIf;
  node.text = std::move(condition);
  node.uniform = uniform;
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::Else() {
  if (open_.empty() || open_.back().node.kind != KernelNode::Kind::kIf ||
      open_.back().in_else) {
    Fail("Else without an open if (or a second Else)");
    return *this;
  }
  open_.back().in_else = true;
  open_.back().node.has_else = true;
  return *this;
}

KernelBuilder& KernelBuilder::EndIf() {
  Close(KernelNode::Kind::kIf, "If");
  return *this;
}

KernelBuilder& KernelBuilder::Roles(RoleAxis axis, std::vector<Role> roles) {
  BeginRoles(axis);
  for (Role& role : roles) {
    BeginRole(role.name, role.count, role.index_var);
    if (role.body) role.body();
    EndRole();
  }
  return EndRoles();
}

KernelBuilder& KernelBuilder::BeginRoles(RoleAxis axis) {
  KernelNode node;
  node.kind = KernelNode::Kind::kRoles;
  node.axis = axis;
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::BeginRole(std::string name, uint32_t count,
                                        std::string index_var) {
  KernelNode node;
  node.kind = KernelNode::Kind::kRole;
  node.text = std::move(name);
  node.count = count;
  node.index_var = std::move(index_var);
  if (!open_.empty() && open_.back().node.kind == KernelNode::Kind::kRoles) {
    for (const KernelNode& r : open_.back().node.roles) node.first += r.count;
  }
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::EndRole() {
  Close(KernelNode::Kind::kRole, "Role");
  return *this;
}

KernelBuilder& KernelBuilder::EndRoles() {
  Close(KernelNode::Kind::kRoles, "Roles");
  return *this;
}

KernelBuilder& KernelBuilder::Barrier(std::string name, BarrierRecord record) {
  KernelNode node;
  node.kind = KernelNode::Kind::kBarrier;
  node.text = std::move(name);
  node.barrier_record = record;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::NamedBarrierSync(std::string name, uint32_t id, uint32_t threads,
                                               BarrierRecord record) {
  Append(NamedBarrierNode(std::move(name), id, threads, /*arrive=*/false, record));
  return *this;
}

KernelBuilder& KernelBuilder::NamedBarrierArrive(std::string name, uint32_t id,
                                                 uint32_t threads) {
  // An arrive does not wait, so there is nothing to record.
  Append(NamedBarrierNode(std::move(name), id, threads, /*arrive=*/true, BarrierRecord::kNever));
  return *this;
}

KernelBuilder& KernelBuilder::PhaseBarriers(std::string name, uint32_t size, uint32_t arrivals) {
  if (!open_.empty()) {
    Fail(absl::StrCat("phase barrier array '", name,
                      "' declared inside a construct; declare it at the top of the kernel "
                      "(it is initialized once, at the kernel's start)"));
    return *this;
  }
  uint32_t first = 0;
  for (const PhaseBarrierDecl& b : kernel_.phase_barriers) first += b.size;
  kernel_.phase_barriers.push_back(PhaseBarrierDecl{std::move(name), size, arrivals, first});
  return *this;
}

KernelBuilder& KernelBuilder::Arrive(std::string barriers, Expr index, Expr phase, ArriveBy by) {
  Append(PhaseBarrierNode(KernelNode::Kind::kArrive, std::move(barriers), index, phase, by));
  return *this;
}

KernelBuilder& KernelBuilder::ArriveExpectTx(std::string barriers, Expr index, Expr phase,
                                             Expr bytes, ArriveBy by) {
  if (bytes.text().empty()) {
    // An empty count would make it a plain Arrive (tx_bytes tells the two apart).
    Fail(absl::StrCat("ArriveExpectTx on '", barriers,
                      "' has an empty byte count; give the bytes its copies complete"));
    return *this;
  }
  KernelNode node =
      PhaseBarrierNode(KernelNode::Kind::kArrive, std::move(barriers), index, phase, by);
  node.tx_bytes = bytes.text();
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::WaitPhase(std::string barriers, Expr index, Expr phase) {
  Append(PhaseBarrierNode(KernelNode::Kind::kPhaseWait, std::move(barriers), index, phase,
                          ArriveBy::kEveryThread));
  return *this;
}

KernelBuilder& KernelBuilder::AsyncCopy(AsyncCopySpec spec) {
  KernelNode node;
  node.kind = KernelNode::Kind::kAsyncCopy;
  node.text = spec.name;
  node.copy = std::move(spec);
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::WaitAsyncCopies(uint32_t pending) {
  KernelNode node;
  node.kind = KernelNode::Kind::kAsyncWait;
  node.async_pending = pending;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::MmaGroup(std::string name, const std::function<void()>& body) {
  BeginMmaGroup(name);
  if (body) body();
  return EndMmaGroup(name);
}

KernelBuilder& KernelBuilder::BeginMmaGroup(std::string name) {
  KernelNode node;
  node.kind = KernelNode::Kind::kMmaGroup;
  node.text = std::move(name);
  Open(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::EndMmaGroup(std::string name) {
  Close(KernelNode::Kind::kMmaGroup, "MmaGroup", name);
  return *this;
}

KernelBuilder& KernelBuilder::WaitMmaGroups(uint32_t pending) {
  KernelNode node;
  node.kind = KernelNode::Kind::kMmaWait;
  node.async_pending = pending;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::SetMaxRegisters(uint32_t registers, RegisterChange change) {
  KernelNode node;
  node.kind = KernelNode::Kind::kSetMaxRegisters;
  node.registers = registers;
  node.register_change = change;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::TmaStore(AsyncCopySpec spec) {
  KernelNode node;
  node.kind = KernelNode::Kind::kTmaStore;
  node.text = spec.name;
  node.copy = std::move(spec);
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::WaitTmaStores(uint32_t pending) {
  KernelNode node;
  node.kind = KernelNode::Kind::kTmaStoreWait;
  node.async_pending = pending;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::Return(ReturnScope scope) {
  KernelNode node;
  node.kind = KernelNode::Kind::kReturn;
  node.return_scope = scope;
  Append(std::move(node));
  return *this;
}

namespace {
constexpr char kBuildErrorPayload[] = "warptrace.dev/KernelBuilder.Build";
}  // namespace

bool IsBuildError(const absl::Status& status) {
  return absl::IsInvalidArgument(status) && status.GetPayload(kBuildErrorPayload).has_value();
}

absl::StatusOr<Kernel> KernelBuilder::Build() const {
  absl::StatusOr<Kernel> kernel = BuildUnmarked();
  if (!kernel.ok()) {
    absl::Status status = kernel.status();
    status.SetPayload(kBuildErrorPayload, absl::Cord(kernel_.name));
    return status;
  }
  return kernel;
}

absl::StatusOr<Kernel> KernelBuilder::BuildUnmarked() const {
  if (!error_.empty()) return absl::InvalidArgumentError(error_);
  if (!open_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Path(), ": ", open_.back().label,
        " is still open at Build(); close it (EndRegion/EndFor/EndIf/EndRole/EndRoles)"));
  }
  Kernel kernel = kernel_;
  RETURN_IF_ERROR(ValidateKernel(kernel));
  if (!kernel.cluster_path.empty()) {
    kernel.requirements.Add(TargetFeature::kClusters, kernel.cluster_path);
    if (kernel.cluster.Count() > 1) {  // a cluster link scope (format/links.h)
      uint32_t ids = 0;
      for (const PhaseBarrierDecl& decl : kernel.phase_barriers) ids += decl.size;
      for (PhaseBarrierDecl& decl : kernel.phase_barriers) decl.cluster_ids = ids;
    }
  }
  ForEachNode(kernel.body,
              [&](const KernelNode& node) { AddRequirements(node, kernel.requirements); });
  kernel.primitives_use = FindPrimitivesUse(kernel.body);
  for (const PreambleDecl& preamble : kernel.preamble) {
    if (kernel.primitives_use.empty() && NamesPrimitive(preamble.code)) {
      kernel.primitives_use = preamble.path;
    }
  }
  kernel.fixed_register_count = UsesSetMaxRegisters(kernel.body);
  if (kernel.fixed_register_count && kernel.min_blocks_per_sm > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kernel ", kernel.name, ": MinBlocksPerSm(", kernel.min_blocks_per_sm,
        ") with SetMaxRegisters: setmaxnreg needs the register count at entry fixed for one "
        "block per SM (__launch_bounds__(threads, 1)); use MinBlocksPerSm(1) or none"));
  }
  uint32_t next = 0;
  AssignOrdinals(kernel.body, next);
  kernel.num_nodes = next;
  return kernel;
}

}  // namespace warptrace

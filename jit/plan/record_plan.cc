#include "jit/plan/record_plan.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "format/trace_abi.h"
#include "jit/builder/trip_expr.h"
#include "jit/plan/event_counter.h"
#include "jit/plan/plan_barriers.h"
#include "jit/plan/unit_choice.h"
#include "jit/target/cuda_target.h"

namespace warptrace {
namespace {

// The third way to bound a loop, named where a record site sits in an unbounded one.
constexpr char kPerBlockHint[] =
    "TripCount::PerBlock(expr) for a count computed from blockIdx, gridDim, blockDim and "
    "integer scalar parameters; TripCount::PerBlock() takes it from the loop's own bounds";


constexpr uint64_t kMaxStaticSharedBytes = 48 * 1024;

using plan_internal::PlanBarriers;
using plan_internal::RecorderThread;
using plan_internal::Counter;
using plan_internal::Join;
using plan_internal::PerBlockTrips;
using plan_internal::Range;
using plan_internal::SatAdd;

// Loop sites of one name (one variable in several places) are named by their builder path
// below the kernel instead ("region qk > loop block_idx"), so the timeline, the summary and
// the analysis tell them apart.
void DistinguishLoopSites(const std::string& kernel_prefix, std::vector<SiteInfo>& sites) {
  std::map<std::string, int> loops_named;
  for (const SiteInfo& site : sites) {
    if (site.kind == SiteKind::kLoopBody) ++loops_named[site.name];
  }
  for (SiteInfo& site : sites) {
    if (site.kind != SiteKind::kLoopBody || loops_named[site.name] < 2) continue;
    site.name = absl::StartsWith(site.origin, kernel_prefix)
                    ? site.origin.substr(kernel_prefix.size())
                    : site.origin;
  }
}

// Assigns site ids in preorder; rejects named regions in loops of unknown trip count.
class SiteAssigner {
 public:
  SiteAssigner(const RecordPolicy& policy, std::vector<std::optional<uint32_t>>* site_of_node,
               std::vector<SiteInfo>* sites)
      : policy_(policy), site_of_node_(site_of_node), sites_(sites) {}

  absl::Status Body(const std::vector<KernelNode>& body) {
    for (const KernelNode& node : body) RETURN_IF_ERROR(Node(node));
    return absl::OkStatus();
  }
  // Whether links reach across the cluster (LinkScope::kCluster): only then is a remote
  // arrival recorded (in a block scope it would link to the issuing CTA's own barrier).
  void set_cluster_links(bool on) { cluster_links_ = on; }

 private:
  void Add(const KernelNode& node, std::string name, SiteKind kind) {
    const uint32_t id = static_cast<uint32_t>(sites_->size());
    sites_->push_back(SiteInfo{id, std::move(name), kind, node.path});
    (*site_of_node_)[node.ordinal] = id;
  }

  // A __syncthreads or named barrier sync: a wait site when asked for (a named barrier's
  // arrive never waits).
  absl::Status BarrierWait(const KernelNode& node) {
    if (node.barrier_record == BarrierRecord::kAlways && !unbounded_loop_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.path, ": barrier '", node.text,
          "' asks for a wait record (BarrierRecord::kAlways) but is inside ", unbounded_loop_,
          ", whose trip count is unknown, so its events cannot be counted; give that loop "
          "TripCount::Exact(n) or TripCount::UpperBound(n) (or ", kPerBlockHint, "), or use "
          "BarrierRecord::kByPolicy "
          "(no record there) or kNever"));
    }
    const bool wanted = !node.named_arrive &&
                        (node.barrier_record == BarrierRecord::kAlways ||
                         (node.barrier_record == BarrierRecord::kByPolicy &&
                          policy_.barrier_waits));
    if (wanted && unbounded_loop_.empty()) Add(node, node.text, SiteKind::kBarrierWait);
    return absl::OkStatus();
  }

  // Arrivals, phase waits and copies: recorded by RecordPolicy::handoffs, where bounded.
  // Whether it added a site.
  bool AddHandoff(const KernelNode& node, std::string name, SiteKind kind) {
    if (!policy_.handoffs || !unbounded_loop_.empty()) return false;
    Add(node, std::move(name), kind);
    return true;
  }

  // What moves a copy's bytes and how many one moves (SiteInfo::copy_engine, copy_bytes).
  static void DescribeCopy(const KernelNode& node, SiteInfo& site) {
    const AsyncCopySpec& copy = node.copy;
    if (node.kind == KernelNode::Kind::kTmaStore) {
      site.copy_engine = TmaCopyEngine(copy.coords.size(), /*store=*/true);
      site.copy_bytes = copy.box.empty() ? 0 : copy.Bytes();  // a store need not give its box
    } else if (copy.tma()) {
      site.copy_engine = TmaCopyEngine(copy.coords.size(), /*store=*/false);
      site.copy_bytes = copy.Bytes();
      site.multicast = !copy.multicast_mask.empty();
    } else {
      site.copy_engine = copy.barrier.empty() ? CopyEngine::kCpAsync : CopyEngine::kBulk;
      site.copy_bytes = copy.Bytes();
    }
  }

  // "loop k", or "loop k #2" for the builder's second loop of k in one body.
  static std::string LoopSiteName(const KernelNode& node) {
    const std::string label = absl::StrCat("loop ", node.text);
    const size_t at = node.path.rfind(absl::StrCat(" > ", label));
    return at == std::string::npos ? label : node.path.substr(at + 3);
  }

  absl::Status Node(const KernelNode& node) {
    switch (node.kind) {
      case KernelNode::Kind::kRegion:
        if (!unbounded_loop_.empty()) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": region '", node.text, "' is inside ", unbounded_loop_,
              ", whose trip count is unknown, so its events cannot be counted; give that "
              "loop TripCount::Exact(n) or TripCount::UpperBound(n) (or ", kPerBlockHint,
              "), or move the region out of it"));
        }
        Add(node, node.text, SiteKind::kRegion);
        return Body(node.body);
      case KernelNode::Kind::kLoop: {
        if (node.trip.bounded() && unbounded_loop_.empty() && policy_.loop_iterations) {
          Add(node, LoopSiteName(node), SiteKind::kLoopBody);
        }
        const std::string saved = unbounded_loop_;
        if (!node.trip.bounded() && unbounded_loop_.empty()) unbounded_loop_ = node.path;
        absl::Status status = Body(node.body);
        unbounded_loop_ = saved;
        return status;
      }
      case KernelNode::Kind::kIf:
        RETURN_IF_ERROR(Body(node.body));
        return Body(node.else_body);
      case KernelNode::Kind::kRoles:
        for (const KernelNode& role : node.roles) RETURN_IF_ERROR(Body(role.body));
        return absl::OkStatus();
      case KernelNode::Kind::kBarrier:
      case KernelNode::Kind::kNamedBarrier:
      case KernelNode::Kind::kClusterBarrier:
        return BarrierWait(node);
      case KernelNode::Kind::kArrive:
        if (!node.cta.empty() && !cluster_links_) return absl::OkStatus();
        AddHandoff(node, absl::StrCat("arrive ", node.text), SiteKind::kBarrierArrive);
        return absl::OkStatus();
      case KernelNode::Kind::kPhaseWait:
        AddHandoff(node, absl::StrCat("wait ", node.text), SiteKind::kPhaseWait);
        return absl::OkStatus();
      case KernelNode::Kind::kAsyncCopy:
      case KernelNode::Kind::kTmaStore:
        if (AddHandoff(node, node.text, SiteKind::kAsyncCopy)) DescribeCopy(node, sites_->back());
        return absl::OkStatus();
      case KernelNode::Kind::kMmaGroup:
        if (policy_.mma_groups && unbounded_loop_.empty()) {
          Add(node, node.text, SiteKind::kMmaGroup);
        }
        return Body(node.body);
      case KernelNode::Kind::kStatement:
      case KernelNode::Kind::kRole:  // reached through kRoles
      case KernelNode::Kind::kReturn:
      case KernelNode::Kind::kAsyncWait:
      case KernelNode::Kind::kMmaWait:
      case KernelNode::Kind::kSetMaxRegisters:
      case KernelNode::Kind::kTmaStoreWait:
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  const RecordPolicy& policy_;
  std::vector<std::optional<uint32_t>>* site_of_node_;
  std::vector<SiteInfo>* sites_;
  std::string unbounded_loop_;  // path of the outermost enclosing unknown-trip loop
  bool cluster_links_ = false;
};

bool ContainsReturn(const std::vector<KernelNode>& body) {
  return FindNode(body, [](const KernelNode& node) {
           return node.kind == KernelNode::Kind::kReturn;
         }) != nullptr;
}

// Where a loop is in the tree: whether a loop without a site is between the nearest
// span and here (its loops' sites are then entered many times per span entry), that span's
// site (-1: none), and whether a branch or role split is between it and here.
struct TripContext {
  bool loop_since_span = false;
  int64_t span_site = -1;
  bool conditional = false;
};

// The site a loop's iterations are counted on: its own iteration site, else the first
// region directly in its body that has a site.
std::optional<uint32_t> LoopCounterSite(const KernelNode& loop,
                                        const std::vector<std::optional<uint32_t>>& site_of_node) {
  if (site_of_node[loop.ordinal].has_value()) return site_of_node[loop.ordinal];
  for (const KernelNode& child : loop.body) {
    if (child.kind == KernelNode::Kind::kRegion && site_of_node[child.ordinal]) {
      return site_of_node[child.ordinal];
    }
  }
  return std::nullopt;
}

// Marks each loop with a constant trip count on the site entered exactly once per
// iteration (format/layout.h, SiteTrip): its own iteration site, else the first
// region directly in its body. Only where the loop's iterations are counted per entry of
// the span around that site: a loop nested in another loop with no span between them is
// left unmarked (its count multiplies). A loop with an early return inside may stop short,
// so its exact count becomes an upper bound. A loop that runs whenever its span runs to the
// end gets that span's site as SiteTrip::always_in.
void MarkLoopTrip(const KernelNode& loop,
                  const std::vector<std::optional<uint32_t>>& site_of_node,
                  std::vector<SiteTrip>& sites, const TripContext& at) {
  const std::optional<uint32_t> counter = LoopCounterSite(loop, site_of_node);
  const bool constant = loop.trip.kind() == TripCount::Kind::kExact ||
                        loop.trip.kind() == TripCount::Kind::kUpperBound;
  if (!counter.has_value() || !constant || at.loop_since_span) return;
  SiteTrip& site = sites[*counter];
  const bool exact = loop.trip.kind() == TripCount::Kind::kExact && !ContainsReturn(loop.body);
  site.bound = exact ? TripBound::kExact : TripBound::kUpperBound;
  site.count = loop.trip.count();
  site.loop = loop.path;
  site.always_in = at.conditional ? -1 : at.span_site;
}

// Where a nested body of `nested.parent` lies, from where the parent lies.
TripContext EnterTripContext(const NestedBody& nested,
                             const std::vector<std::optional<uint32_t>>& site_of_node,
                             const TripContext& at) {
  const KernelNode& node = *nested.parent;
  const std::optional<uint32_t> own = site_of_node[node.ordinal];
  switch (node.kind) {
    case KernelNode::Kind::kRegion:
      return own.has_value() ? TripContext{false, *own, false} : at;
    case KernelNode::Kind::kLoop:
      return own.has_value() ? TripContext{false, *own, false}
                             : TripContext{true, at.span_site, at.conditional};
    case KernelNode::Kind::kIf:
    case KernelNode::Kind::kRoles:
      return TripContext{at.loop_since_span, at.span_site, true};
    case KernelNode::Kind::kStatement:
    case KernelNode::Kind::kRole:  // its body is entered from kRoles
    case KernelNode::Kind::kBarrier:
    case KernelNode::Kind::kReturn:
    case KernelNode::Kind::kNamedBarrier:
    case KernelNode::Kind::kArrive:
    case KernelNode::Kind::kPhaseWait:
    case KernelNode::Kind::kAsyncCopy:
    case KernelNode::Kind::kAsyncWait:
    case KernelNode::Kind::kMmaGroup:  // its body holds wgmma statements, no marked loop
    case KernelNode::Kind::kMmaWait:
    case KernelNode::Kind::kSetMaxRegisters:
    case KernelNode::Kind::kTmaStore:
    case KernelNode::Kind::kTmaStoreWait:
    case KernelNode::Kind::kClusterBarrier:
      return at;
  }
  return at;
}

// Each site's declared trip count (TraceLayout::site_trips), empty when no loop declares one.
std::vector<SiteTrip> PlanSiteTrips(const Kernel& kernel,
                                    const std::vector<std::optional<uint32_t>>& site_of_node,
                                    const std::vector<SiteInfo>& sites) {
  std::vector<SiteTrip> trips(sites.size(), SiteTrip{});
  TripContext top;
  for (const SiteInfo& site : sites) {
    if (site.kind == SiteKind::kKernel) top.span_site = site.id;
  }
  WalkNodes(
      kernel.body, top,
      [&](const KernelNode& node, const TripContext& at) {
        if (node.kind == KernelNode::Kind::kLoop) MarkLoopTrip(node, site_of_node, trips, at);
      },
      [&](const NestedBody& nested, const TripContext& at) {
        return EnterTripContext(nested, site_of_node, at);
      });
  if (std::all_of(trips.begin(), trips.end(),
                  [](const SiteTrip& t) { return t.bound == TripBound::kNone; })) {
    trips.clear();
  }
  return trips;
}

// A per-block loop, parsed, with the values of the scalars its expression reads.
struct PerBlockLoop {
  const KernelNode* node = nullptr;
  TripExpr expr;
  std::vector<int64_t> scalars;  // in expr.scalars() order
  uint64_t lo = std::numeric_limits<uint64_t>::max();  // over the sampled blocks
  uint64_t hi = 0;
};

// Every loop whose trip count is an expression per block, parsed, with its scalars' values.
absl::Status CollectPerBlockLoops(const Kernel& kernel, const LaunchScalars& scalars,
                                  std::vector<PerBlockLoop>* out) {
  absl::Status status;
  ForEachNode(kernel.body, [&](const KernelNode& node) {
    if (!status.ok() || node.kind != KernelNode::Kind::kLoop ||
        node.trip.kind() != TripCount::Kind::kPerBlock) {
      return;
    }
    absl::StatusOr<TripExpr> expr = TripExpr::Parse(node.trip.expr());
    if (!expr.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat(node.path, ": ", expr.status().message()));
      return;
    }
    PerBlockLoop loop;
    loop.node = &node;
    loop.expr = std::move(*expr);
    absl::StatusOr<std::vector<int64_t>> values =
        ResolveScalars(loop.expr, kernel, scalars, node.path, "per-block trip count");
    if (!values.ok()) {
      status = values.status();
      return;
    }
    loop.scalars = std::move(*values);
    out->push_back(std::move(loop));
  });
  return status;
}

Dim3 BlockIndex(const Dim3& grid, uint64_t linear) {
  return Dim3{static_cast<uint32_t>(linear % grid.x),
              static_cast<uint32_t>(linear / grid.x % grid.y),
              static_cast<uint32_t>(linear / (uint64_t{grid.x} * grid.y))};
}

// Evaluates every per-block loop for block `linear`, into trips (by node ordinal).
absl::Status EvaluateForBlock(const Kernel& kernel, uint64_t linear,
                              std::vector<PerBlockLoop>& loops, std::vector<uint64_t>* trips) {
  TripExprEnv env;
  env.grid_dim = kernel.grid;
  env.block_dim = kernel.block;
  env.block_idx = BlockIndex(kernel.grid, linear);
  for (PerBlockLoop& loop : loops) {
    env.scalars = loop.scalars;
    absl::StatusOr<int64_t> value = loop.expr.Evaluate(env);
    const std::string block = absl::StrFormat("block (%d, %d, %d)", env.block_idx.x,
                                              env.block_idx.y, env.block_idx.z);
    if (!value.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(loop.node->path, ": for ", block, ": ", value.status().message()));
    }
    if (*value < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          loop.node->path, ": per-block trip count '", loop.expr.text(), "' is ", *value,
          " for ", block, "; a trip count is at least 0 (clamp it with max(0, ...))"));
    }
    const uint64_t n = static_cast<uint64_t>(*value);
    (*trips)[loop.node->ordinal] = n;
    loop.lo = std::min(loop.lo, n);
    loop.hi = std::max(loop.hi, n);
  }
  return absl::OkStatus();
}

// Every unit's count: one pass per unit, or with per-block loops one per unit and class of
// blocks (blocks whose per-block trip counts are all equal count the same).
struct UnitCounts {
  std::vector<EventRange> unit_events;
  std::vector<std::string> unit_notes;
  std::vector<std::string> unit_roles;  // by unit: the recorder's role ("" outside any)
  std::vector<uint32_t> block_class;
  std::vector<std::vector<EventRange>> class_events;
  PerBlockTrips explain;     // per-block loops at their largest value, for the tree
  std::string per_block_note;
};

absl::StatusOr<UnitCounts> CountUnits(const Kernel& kernel, const TraceLayout& layout,
                                      const std::vector<std::optional<uint32_t>>& site_of_node,
                                      const LaunchScalars& scalars, uint64_t kernel_events) {
  UnitCounts out;
  std::vector<PerBlockLoop> loops;
  RETURN_IF_ERROR(CollectPerBlockLoops(kernel, scalars, &loops));
  PerBlockTrips trips;
  trips.trip.assign(kernel.num_nodes, 0);
  trips.how.assign(kernel.num_nodes, "");
  // Distinct per-block trip vectors, in order of first block.
  std::vector<std::vector<uint64_t>> classes;
  if (loops.empty()) {
    classes.push_back(trips.trip);
  } else {
    std::map<std::vector<uint64_t>, uint32_t> class_of;
    const uint64_t blocks = SampledBlocks(layout);
    out.block_class.reserve(blocks);
    for (uint64_t ordinal = 0; ordinal < blocks; ++ordinal) {
      RETURN_IF_ERROR(
          EvaluateForBlock(kernel, SampledBlockId(layout, ordinal), loops, &trips.trip));
      const auto [it, added] =
          class_of.emplace(trips.trip, static_cast<uint32_t>(classes.size()));
      if (added) classes.push_back(trips.trip);
      out.block_class.push_back(it->second);
    }
    if (classes.empty()) classes.push_back(trips.trip);  // no sampled block
    for (const PerBlockLoop& loop : loops) {
      const uint32_t o = loop.node->ordinal;
      const uint64_t lo = blocks == 0 ? 0 : loop.lo;
      out.explain.trip.resize(kernel.num_nodes, 0);
      out.explain.how.resize(kernel.num_nodes);
      out.explain.trip[o] = loop.hi;
      out.explain.how[o] = absl::StrCat("per-block(", loop.expr.text(), ") in [", lo, ", ",
                                        loop.hi, "], largest");
    }
    out.per_block_note = absl::StrCat(
        "per-block trip counts evaluated for ", blocks, " sampled blocks: ", classes.size(),
        " distinct, capacity from the largest\n");
  }
  if (out.explain.trip.empty()) {
    out.explain.trip.assign(kernel.num_nodes, 0);
    out.explain.how.assign(kernel.num_nodes, "");
  }

  const uint32_t units = UnitsPerBlock(layout);
  out.class_events.assign(classes.size(), std::vector<EventRange>(units));
  for (uint32_t u = 0; u < units; ++u) {
    EventRange merged{std::numeric_limits<uint64_t>::max(), 0};
    std::string role, data_dependent;
    for (size_t c = 0; c < classes.size(); ++c) {
      trips.trip = classes[c];
      Counter counter(site_of_node, RecorderThread(layout, u), trips, nullptr);
      counter.set_sites(&layout.sites);
      const Range any = counter.Body(kernel.body, 0, nullptr).Any();
      const EventRange r{SatAdd(any.min, kernel_events), SatAdd(any.max, kernel_events)};
      out.class_events[c][u] = r;
      merged = {std::min(merged.min, r.min), std::max(merged.max, r.max)};
      role = counter.role();
      if (data_dependent.empty()) data_dependent = counter.data_dependent();
    }
    out.unit_events.push_back(merged);
    std::string note = absl::StrCat("recorder thread ", RecorderThread(layout, u));
    if (!role.empty()) absl::StrAppend(&note, ", role ", role);
    out.unit_roles.push_back(role);
    if (!data_dependent.empty()) absl::StrAppend(&note, "; depends on data at ", data_dependent);
    if (classes.size() > 1 && !merged.exact()) {
      absl::StrAppend(&note, "; depends on the block (per-block loop)");
    }
    out.unit_notes.push_back(std::move(note));
  }
  if (loops.empty()) out.class_events.clear();
  return out;
}

// Sets layout.placement per options.placement; returns how it was chosen.
absl::StatusOr<std::string> ChoosePlacement(const Kernel& kernel, const ProfileOptions& options,
                                            TraceLayout& layout) {
  const std::string where = absl::StrCat("kernel ", kernel.name);
  const uint32_t units = UnitsPerBlock(layout);
  const uint64_t own_static = kernel.StaticSharedBytes();
  const uint64_t own_shared = own_static + kernel.dynamic_shared.bytes;
  const uint64_t staging = SharedBytesPerBlock(layout);
  std::string placement_note;
  switch (options.placement) {
    case Placement::kGlobal:
      layout.placement = Placement::kGlobal;
      placement_note = "global (as asked)";
      break;
    case Placement::kShared:
      if (own_static + staging > kMaxStaticSharedBytes) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: shared placement needs a %d-byte staging array (%d units x %d events x 8), "
            "which with the kernel's %d bytes of static shared arrays exceeds the %d-byte "
            "static shared limit; use Placement::kGlobal or kAuto",
            where, staging, units, layout.capacity, own_static, kMaxStaticSharedBytes));
      }
      layout.placement = Placement::kShared;
      placement_note = "shared (as asked)";
      break;
    case Placement::kAuto: {
      const uint64_t left =
          options.shared_budget_bytes > own_shared ? options.shared_budget_bytes - own_shared : 0;
      const bool fits = staging <= left && own_static + staging <= kMaxStaticSharedBytes;
      layout.placement = fits ? Placement::kShared : Placement::kGlobal;
      placement_note = absl::StrFormat(
          "auto -> %s: staging %d bytes %s %d left of the %d-byte budget after the kernel's "
          "%d shared bytes",
          fits ? "shared" : "global", staging, fits ? "fits the" : "exceeds the", left,
          options.shared_budget_bytes, own_shared);
      break;
    }
  }
  return placement_note;
}

// The derivation tree, with the largest role of each split.
std::string ExplainTree(const Kernel& kernel, const TraceLayout& layout,
                        const std::vector<std::optional<uint32_t>>& site_of_node,
                        const PerBlockTrips& trips, uint64_t kernel_events) {
  std::vector<std::string> lines;
  Counter counter(site_of_node, std::nullopt, trips, &lines);
  counter.set_sites(&layout.sites);
  std::vector<std::string> terms;
  if (kernel_events > 0) terms.push_back(absl::StrCat("kernel ", kernel_events));
  const Range any = counter.Body(kernel.body, 1, &terms).Any();
  std::string text = absl::StrCat("kernel ", kernel.name, " -> ", Join(terms), " = ",
                                  SatAdd(any.max, kernel_events), "\n");
  for (const std::string& line : lines) {
    if (!line.empty()) absl::StrAppend(&text, line, "\n");
  }
  return text;
}

// "(6,0,0)", as messages name a block.
std::string DimText(const Dim3& d) { return absl::StrFormat("(%d,%d,%d)", d.x, d.y, d.z); }

// The layout's launch shape: kernel, grid, block, unit, cluster, and the block sample
// clamped to the grid (and widened to whole clusters when a cluster is the link scope).
void SetLaunchShape(const Kernel& kernel, const ProfileOptions& options, TraceLayout& layout) {
  layout.kernel_name = kernel.name;
  layout.grid = kernel.grid;
  layout.block = kernel.block;
  layout.unit = options.unit.value_or(DefaultUnit(kernel.block.Count()));
  layout.cluster = kernel.cluster;
  layout.sample = options.sample;
  layout.sample.end = static_cast<uint32_t>(
      std::min<uint64_t>(options.sample.end, kernel.grid.Count()));
  if (kernel.cluster.Count() > 1 && layout.sample.stride == 1) {
    // Sampling takes whole clusters: the bounds widen to the link scope instances (runs of
    // blocks holding whole clusters) they cut.
    const uint32_t n = BlocksPerLinkScope(layout);
    layout.sample.begin -= layout.sample.begin % n;
    layout.sample.end = (layout.sample.end + n - 1) / n * n;
  }
}

}  // namespace

absl::StatusOr<RecordPlan> RecordPlan::Create(const Kernel& kernel,
                                              const ProfileOptions& options,
                                              const LaunchScalars& scalars) {
  const std::string where = absl::StrCat("kernel ", kernel.name);
  if (!options.enabled) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": profiling is disabled, so there is nothing to plan"));
  }
  RecordPlan plan;
  plan.host_trip_checks_ = options.host_trip_checks;
  TraceLayout& layout = plan.layout_;
  SetLaunchShape(kernel, options, layout);

  plan.site_of_node_.assign(kernel.num_nodes, std::nullopt);
  if (options.policy.kernel) {
    plan.kernel_site_ = 0;
    layout.sites.push_back(SiteInfo{0, kernel.name, SiteKind::kKernel, where});
  }
  SiteAssigner assigner(options.policy, &plan.site_of_node_, &layout.sites);
  assigner.set_cluster_links(LinkScopeOf(layout) == LinkScope::kCluster);
  RETURN_IF_ERROR(assigner.Body(kernel.body));
  DistinguishLoopSites(absl::StrCat(where, " > "), layout.sites);
  if (layout.sites.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": profiled, but the kernel has no record site; add a Region or enable "
               "RecordPolicy::kernel"));
  }
  uint64_t kernel_events = plan.kernel_site_.has_value() ? 2 : 0;

  // Per-unit ranges. Capacity 1 is a placeholder so the layout helpers work; the real
  // capacity is set below.
  layout.capacity = 1;
  layout.placement = Placement::kGlobal;
  RETURN_IF_ERROR(ValidateLayout(layout));
  // Copies whose ends no recorded wait gives keep an observed end (format/links.h).
  plan_internal::MarkObservedCopyEnds(kernel, plan.site_of_node_, layout);
  // Group kinds whose ends the dump derives at their waits: each records a wait(0) before
  // the kernel's exit, in every unit (format/links.h).
  kernel_events +=
      2 * uint64_t{plan_internal::MarkGroupEndsAtWaits(kernel, plan.site_of_node_, layout)};
  ASSIGN_OR_RETURN(UnitCounts counts,
                   CountUnits(kernel, layout, plan.site_of_node_, scalars, kernel_events));
  plan.unit_events_ = std::move(counts.unit_events);
  plan.unit_notes_ = std::move(counts.unit_notes);
  plan.block_class_ = std::move(counts.block_class);
  plan.class_events_ = std::move(counts.class_events);
  for (const EventRange& r : plan.unit_events_) {
    plan.max_events_ = std::max(plan.max_events_, r.max);
  }
  // The role table only when the kernel splits roles, the barrier table when it declares
  // phase barriers (format/layout.h).
  layout.barriers = PlanBarriers(kernel, layout, plan.site_of_node_);
  // What the dump checks the run against (profiler/trace/plan_check.h).
  layout.site_trips = PlanSiteTrips(kernel, plan.site_of_node_, layout.sites);
  if (plan.block_class_.empty()) {
    for (const EventRange& r : plan.unit_events_) {
      layout.exact_events.push_back(r.exact() ? static_cast<int64_t>(r.min) : -1);
    }
  }
  RETURN_IF_ERROR(FillBlockLabels(kernel, scalars, layout));
  layout.unit_roles = std::move(counts.unit_roles);
  if (std::all_of(layout.unit_roles.begin(), layout.unit_roles.end(),
                  [](const std::string& role) { return role.empty(); })) {
    layout.unit_roles.clear();
  }
  if (plan.max_events_ > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: a trace unit can record up to %d events, more than the 2^32-1 a record holds; "
        "record fewer sites (regions in the innermost loops, or RecordPolicy::loop_iterations) "
        "or sample fewer blocks",
        where, plan.max_events_));
  }
  if (options.capacity_override.has_value() && *options.capacity_override == 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": capacity override is 0"));
  }
  layout.capacity = options.capacity_override.value_or(
      static_cast<uint32_t>(std::max<uint64_t>(plan.max_events_, 1)));

  ASSIGN_OR_RETURN(const std::string placement_note, ChoosePlacement(kernel, options, layout));
  RETURN_IF_ERROR(ValidateLayout(layout));

  plan.explanation_ = absl::StrCat(
      ExplainTree(kernel, layout, plan.site_of_node_, counts.explain, kernel_events),
      plan.ExplainNumbers(options, counts.per_block_note, placement_note),
      ExplainUnit(kernel, layout, plan.site_of_node_, options.unit.has_value()));
  // The default target's variant the kernel needs (sm_90 -> sm_90a for wgmma), and why.
  const CudaTarget target = CudaTarget::Default();
  if (const TargetRequirements::Use* use = kernel.requirements.FirstVariantUse(target)) {
    const std::string variant = target.WithFeature(use->feature)->ToString();
    absl::StrAppend(&plan.explanation_, "arch ", variant, " for NVRTC (", variant,
                    "-only instructions at ", use->path, ")\n");
  }
  return plan;
}

std::string RecordPlan::ExplainNumbers(const ProfileOptions& options,
                                       const std::string& per_block_note,
                                       const std::string& placement_note) const {
  const TraceLayout& layout = layout_;
  const uint32_t units = UnitsPerBlock(layout);
  std::string text = absl::StrCat("per ", UnitKindName(layout.unit.kind), " unit:\n");
  for (uint32_t u = 0; u < units; ++u) {
    const EventRange& r = unit_events_[u];
    absl::StrAppend(&text, "  ", UnitKindName(layout.unit.kind), " ", u, " (", unit_notes_[u],
                    "): ",
                    r.exact() ? absl::StrCat(r.max, " exactly")
                              : absl::StrCat(r.min, " to ", r.max),
                    "\n");
  }
  absl::StrAppend(&text, per_block_note);
  absl::StrAppendFormat(&text, "capacity %d events per unit (max over %d units)%s\n",
                        layout.capacity, units,
                        options.capacity_override.has_value()
                            ? absl::StrCat(", overridden from ", max_events_)
                            : "");
  absl::StrAppendFormat(&text, "buffer %d records (%d sampled blocks x %d units) x %d bytes = "
                               "%d bytes\n",
                        NumRecords(layout), SampledBlocks(layout), units,
                        abi::RecordBytes(layout.capacity), BufferBytes(layout));
  absl::StrAppend(&text, "placement ", placement_note, "\n");
  return text;
}

uint64_t RecordPlan::staging_bytes() const {
  return layout_.placement == Placement::kShared ? SharedBytesPerBlock(layout_) : 0;
}

std::optional<uint32_t> RecordPlan::SiteOf(uint32_t node_ordinal) const {
  if (node_ordinal >= site_of_node_.size()) return std::nullopt;
  return site_of_node_[node_ordinal];
}

const SiteInfo* RecordPlan::SiteInfoOf(uint32_t node_ordinal) const {
  const std::optional<uint32_t> id = SiteOf(node_ordinal);
  return id.has_value() ? &layout_.sites[*id] : nullptr;
}

EventRange RecordPlan::EventsForUnit(uint32_t unit) const {
  return unit < unit_events_.size() ? unit_events_[unit] : EventRange{};
}

absl::StatusOr<uint64_t> RecordPlan::ExactEventsForUnit(uint32_t unit) const {
  if (unit >= unit_events_.size()) {
    return absl::OutOfRangeError(absl::StrFormat(
        "kernel %s: %s %d does not exist; a block has %d %s units", layout_.kernel_name,
        UnitKindName(layout_.unit.kind), unit, unit_events_.size(),
        UnitKindName(layout_.unit.kind)));
  }
  const EventRange& r = unit_events_[unit];
  if (!r.exact()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "kernel %s: %s %d of each block records between %d and %d events (%s); only the "
        "maximum is known before the run%s",
        layout_.kernel_name, UnitKindName(layout_.unit.kind), unit, r.min, r.max,
        unit_notes_[unit],
        block_class_.empty() ? "" : "; ExactEventsForBlockUnit gives one block's count"));
  }
  return r.max;
}

EventRange RecordPlan::EventsForBlockUnit(uint32_t block_linear, uint32_t unit) const {
  if (unit >= unit_events_.size() || block_linear < layout_.sample.begin ||
      block_linear >= layout_.sample.end ||
      (block_linear - layout_.sample.begin) % layout_.sample.stride != 0) {
    return EventRange{};
  }
  if (block_class_.empty()) return unit_events_[unit];
  const uint64_t ordinal = (block_linear - layout_.sample.begin) / layout_.sample.stride;
  return class_events_[block_class_[ordinal]][unit];
}

absl::StatusOr<uint64_t> RecordPlan::ExactEventsForBlockUnit(uint32_t block_linear,
                                                            uint32_t unit) const {
  if (unit >= unit_events_.size()) return ExactEventsForUnit(unit);  // OutOfRange
  const EventRange r = EventsForBlockUnit(block_linear, unit);
  if (!r.exact()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "kernel %s: block %s %s %d records between %d and %d events (%s); only the "
        "maximum is known before the run",
        layout_.kernel_name, DimText(BlockIndex(layout_.grid, block_linear)),
        UnitKindName(layout_.unit.kind), unit, r.min, r.max, unit_notes_[unit]));
  }
  return r.max;
}

std::string RecordPlan::Explain() const { return explanation_; }

}  // namespace warptrace

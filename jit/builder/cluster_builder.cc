// KernelBuilder's thread-block cluster calls (kernel_builder.h): the cluster shape and the
// cluster barrier constructs.
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

KernelBuilder& KernelBuilder::Cluster(Dim3 shape, ClusterSize size) {
  if (!kernel_.cluster_path.empty()) {
    Fail(absl::StrCat(kernel_.cluster_path, ": Cluster() called a second time; a kernel has "
                                            "one cluster shape"));
    return *this;
  }
  kernel_.cluster = shape;
  kernel_.non_portable_cluster = size == ClusterSize::kNonPortable;
  kernel_.cluster_path =
      absl::StrCat("kernel ", kernel_.name, " > cluster ", shape.x, "x", shape.y, "x", shape.z);
  return *this;
}

KernelBuilder& KernelBuilder::ClusterBarrier(std::string name, ClusterBarrierOp op,
                                             BarrierRecord record) {
  KernelNode node;
  node.kind = KernelNode::Kind::kClusterBarrier;
  node.text = std::move(name);
  node.cluster_op = op;
  node.barrier_record = record;
  // An arrival does not wait: like bar.arrive it has no wait to record.
  node.named_arrive = op == ClusterBarrierOp::kArrive || op == ClusterBarrierOp::kArriveRelaxed;
  Append(std::move(node));
  return *this;
}

KernelBuilder& KernelBuilder::ClusterSync(std::string name, BarrierRecord record) {
  return ClusterBarrier(std::move(name), ClusterBarrierOp::kSync, record);
}

KernelBuilder& KernelBuilder::ClusterArrive(std::string name, bool relaxed) {
  return ClusterBarrier(std::move(name),
                        relaxed ? ClusterBarrierOp::kArriveRelaxed : ClusterBarrierOp::kArrive,
                        BarrierRecord::kNever);
}

KernelBuilder& KernelBuilder::ClusterWait(std::string name, BarrierRecord record) {
  return ClusterBarrier(std::move(name), ClusterBarrierOp::kWait, record);
}

KernelBuilder& KernelBuilder::ArriveRemote(std::string barriers, Expr index, Expr phase,
                                           Expr cta, ArriveBy by) {
  KernelNode node;
  node.kind = KernelNode::Kind::kArrive;
  node.text = std::move(barriers);
  node.index = index.text();
  node.phase = phase.text();
  node.arrive_by = by;
  node.cta = cta.text();
  if (node.cta.empty()) {
    Fail(absl::StrCat("ArriveRemote on '", node.text,
                      "' has an empty CTA rank; give the rank of the peer whose barrier it "
                      "arrives on"));
    return *this;
  }
  Append(std::move(node));
  return *this;
}

}  // namespace warptrace

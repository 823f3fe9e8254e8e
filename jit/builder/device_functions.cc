// KernelBuilder::Call (kernel_builder.h): a device function described with constructs, its
// body emitted at each call inside a region of its name.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "jit/builder/kernel_builder.h"

namespace warptrace {

KernelBuilder& KernelBuilder::Call(const DeviceFunction& fn, std::vector<std::string> args,
                                   std::string result_var) {
  const std::string call = absl::StrCat("call ", fn.name, "(", absl::StrJoin(args, ", "), ")");
  if (args.size() != fn.params.size()) {
    Fail(absl::StrCat(call, ": ", args.size(), " argument(s) for the ", fn.params.size(),
                      " parameter(s) of ", fn.name, " (", absl::StrJoin(fn.params, ", "), ")"));
    return *this;
  }
  if (fn.result_type.empty() != result_var.empty()) {
    Fail(absl::StrCat(call, ": ",
                      fn.result_type.empty()
                          ? absl::StrCat(fn.name, " has no result type, but the call names a "
                                         "result variable '", result_var, "'")
                          : absl::StrCat(fn.name, " returns ", fn.result_type,
                                         ": give Call a variable to hold it")));
    return *this;
  }
  if (!fn.body) {
    Fail(absl::StrCat(call, ": device function ", fn.name, " has no body"));
    return *this;
  }
  if (call_depth_ >= 8) {
    Fail(absl::StrCat(call, ": calls nested more than 8 deep (does ", fn.name,
                      " call itself?); a device function's body is emitted at each call"));
    return *this;
  }
  if (!fn.result_type.empty()) Stmt(absl::StrCat(fn.result_type, " ", result_var, "{};"));
  KernelNode node;
  node.kind = KernelNode::Kind::kRegion;
  node.text = fn.name;
  node.call = true;
  Open(std::move(node));
  // Every argument is evaluated before any parameter is declared, so `float v` bound to an
  // outer `v` reads the outer one.
  std::string bind;
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StrAppend(&bind, "const auto warptrace_arg", i, " = (", args[i], ");\n");
  }
  for (size_t i = 0; i < fn.params.size(); ++i) {
    absl::StrAppend(&bind, fn.params[i], " = warptrace_arg", i, ";\n");
  }
  if (!fn.result_type.empty()) {
    absl::StrAppend(&bind, fn.result_type, "& result = ", result_var, ";\n");
  }
  if (!bind.empty()) Stmt(std::string(absl::StripSuffix(bind, "\n")));
  ++call_depth_;
  fn.body(*this);
  --call_depth_;
  Close(KernelNode::Kind::kRegion, "Call", fn.name);
  return *this;
}

}  // namespace warptrace

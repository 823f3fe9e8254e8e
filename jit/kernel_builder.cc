#include "jit/kernel_builder.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/status_macros.h"

namespace warptrace {
namespace {

constexpr uint32_t kMaxBlockThreads = 1024;
constexpr uint64_t kMaxStaticSharedBytes = 48 * 1024;
// The largest opt-in dynamic shared memory of any supported GPU (sm_90: 227 KiB).
constexpr uint64_t kMaxSharedBytes = 227 * 1024;
constexpr size_t kMaxSiteNameLength = 64;

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

const std::map<std::string, uint32_t>& ScalarTypes() {
  static const auto* types = new std::map<std::string, uint32_t>{
      {"bool", 1},          {"char", 1},     {"signed char", 1},
      {"unsigned char", 1}, {"short", 2},    {"unsigned short", 2},
      {"int", 4},           {"unsigned int", 4}, {"unsigned", 4},
      {"long long", 8},     {"unsigned long long", 8}, {"float", 4},
      {"double", 8}};
  return *types;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Collapses runs of spaces and trims; "const  float *" -> "const float*".
std::string NormalizeType(const std::string& type) {
  std::string out;
  for (char c : type) {
    if (c == ' ' || c == '\t') {
      if (!out.empty() && out.back() != ' ') out.push_back(' ');
    } else if (c == '*') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out.push_back('*');
    } else {
      out.push_back(c);
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool ContainsToken(const std::string& code, const std::string& token) {
  size_t pos = 0;
  while ((pos = code.find(token, pos)) != std::string::npos) {
    const bool left_ok = pos == 0 || !IsIdentChar(code[pos - 1]);
    const size_t after = pos + token.size();
    const bool right_ok = after >= code.size() || !IsIdentChar(code[after]);
    if (left_ok && right_ok) return true;
    pos = after;
  }
  return false;
}

std::string Abbreviate(const std::string& text, size_t max_length = 32) {
  std::string one_line;
  for (char c : text) one_line.push_back(c == '\n' || c == '\t' ? ' ' : c);
  if (one_line.size() <= max_length) return one_line;
  return one_line.substr(0, max_length - 3) + "...";
}

std::string LabelOf(const KernelNode& node) {
  switch (node.kind) {
    case KernelNode::Kind::kStatement:
      return absl::StrCat("statement `", Abbreviate(node.text), "`");
    case KernelNode::Kind::kRegion:
      return absl::StrCat("region ", node.text);
    case KernelNode::Kind::kLoop:
      return absl::StrCat("loop ", node.text);
    case KernelNode::Kind::kIf:
      return absl::StrCat("if (", Abbreviate(node.text), ")");
    case KernelNode::Kind::kRoles:
      return absl::StrCat("roles by ", RoleAxisName(node.axis));
    case KernelNode::Kind::kRole:
      return absl::StrCat("role ", node.text);
    case KernelNode::Kind::kBarrier:
      return absl::StrCat("barrier ", node.text);
    case KernelNode::Kind::kReturn:
      return "return";
  }
  return "?";
}

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

// Walks the finished tree, checking everything that needs context.
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
    for (const SharedArrayDecl& a : kernel_.shared_arrays) {
      RETURN_IF_ERROR(Declare(a.name, "shared array", root));
    }
    if (!kernel_.dynamic_shared.type.empty()) {
      RETURN_IF_ERROR(Declare(kernel_.dynamic_shared.name, "dynamic shared array", root));
    }
    RETURN_IF_ERROR(CheckLaunchShape(root));
    if (kernel_.body.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          root, ": the kernel is empty; add statements (Stmt) or constructs to its body"));
    }
    return CheckBody(kernel_.body);
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
        if (ContainsToken(node.text, "return")) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": a raw statement may not return (the profiler epilogue would be "
                         "skipped); use Return()"));
        }
        if (ContainsToken(node.text, "extern") && ContainsToken(node.text, "__shared__")) {
          return absl::InvalidArgumentError(absl::StrCat(
              node.path, ": declare dynamic shared memory with DynamicShared(), not extern "
                         "__shared__ (the host backend and the plan's budget need to see it)"));
        }
        return absl::OkStatus();
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
      case KernelNode::Kind::kIf:
        if (node.text.find_first_not_of(" \t\n") == std::string::npos) {
          return absl::InvalidArgumentError(absl::StrCat(node.path, ": empty if condition"));
        }
        RETURN_IF_ERROR(CheckBody(node.body));
        return CheckBody(node.else_body);
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
        return CheckSiteKind(node.text, "barrier", node.path);
      case KernelNode::Kind::kReturn:
        return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  absl::Status CheckLoopCount(const KernelNode& node) {
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
      absl::Status status = CheckBody(role.body);
      role_.clear();
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
};

void AssignOrdinals(std::vector<KernelNode>& body, uint32_t& next) {
  for (KernelNode& node : body) {
    node.ordinal = next++;
    AssignOrdinals(node.body, next);
    AssignOrdinals(node.else_body, next);
    AssignOrdinals(node.roles, next);
  }
}

}  // namespace

Expr::Expr(int64_t value)
    : text_(std::to_string(value)), is_literal_(true), literal_(value) {}

Expr::Expr(std::string text) : text_(std::move(text)) {
  // A decimal integer literal (optionally negative) is known to the builder.
  const std::string& t = text_;
  size_t start = !t.empty() && t[0] == '-' ? 1 : 0;
  if (t.size() > start && t.size() - start <= 18 &&
      std::all_of(t.begin() + start, t.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    is_literal_ = true;
    literal_ = std::stoll(t);
  }
}

const char* RoleAxisName(RoleAxis axis) {
  return axis == RoleAxis::kWarp ? "warp" : "warpgroup";
}

uint32_t RoleAxisThreads(RoleAxis axis) { return axis == RoleAxis::kWarp ? 32 : 128; }

const char* KernelNodeKindName(KernelNode::Kind kind) {
  switch (kind) {
    case KernelNode::Kind::kStatement: return "statement";
    case KernelNode::Kind::kRegion: return "region";
    case KernelNode::Kind::kLoop: return "loop";
    case KernelNode::Kind::kIf: return "if";
    case KernelNode::Kind::kRoles: return "roles";
    case KernelNode::Kind::kRole: return "role";
    case KernelNode::Kind::kBarrier: return "barrier";
    case KernelNode::Kind::kReturn: return "return";
  }
  return "?";
}

uint64_t Kernel::StaticSharedBytes() const {
  uint64_t bytes = 0;
  for (const SharedArrayDecl& a : shared_arrays) bytes += a.Bytes();
  return bytes;
}

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

void KernelBuilder::Append(KernelNode node, const std::string& label) {
  std::vector<KernelNode>* body = CurrentBody(KernelNodeKindName(node.kind));
  if (body == nullptr) return;
  node.path = absl::StrCat(Path(), " > ", label);
  body->push_back(std::move(node));
}

void KernelBuilder::Open(KernelNode node, const std::string& label) {
  if (node.kind == KernelNode::Kind::kRole) {
    if (open_.empty() || open_.back().node.kind != KernelNode::Kind::kRoles) {
      Fail(absl::StrCat("role '", node.text, "' outside a role split; call BeginRoles first"));
      return;
    }
  } else if (CurrentBody(KernelNodeKindName(node.kind)) == nullptr) {
    return;
  }
  node.path = absl::StrCat(Path(), " > ", label);
  open_.push_back(Frame{std::move(node), label, false});
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
  if (!param.type.empty() && param.type.back() == '*') {
    std::string base = param.type;
    while (!base.empty() && (base.back() == '*' || base.back() == ' ')) base.pop_back();
    if (base.rfind("const ", 0) == 0) base = base.substr(6);
    if (ScalarTypes().count(base) == 0 && base != "void") {
      Fail(absl::StrCat("parameter '", param.name, "' has pointer type '", param.type,
                        "' to an unknown element type '", base,
                        "'; use a pointer to a scalar type or void"));
      return *this;
    }
    param.is_pointer = true;
    param.size = 8;
  } else {
    auto it = ScalarTypes().find(param.type);
    if (it == ScalarTypes().end()) {
      Fail(absl::StrCat("parameter '", param.name, "' has unknown scalar type '", param.type,
                        "'; use int, unsigned int, long long, float, double, ... or a pointer"));
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

KernelBuilder& KernelBuilder::SharedArray(std::string type, std::string name, uint64_t count) {
  type = NormalizeType(type);
  auto it = ScalarTypes().find(type);
  if (it == ScalarTypes().end()) {
    Fail(absl::StrCat("shared array '", name, "' has unknown element type '", type, "'"));
    return *this;
  }
  if (count == 0) {
    Fail(absl::StrCat("shared array '", name, "' has 0 elements"));
    return *this;
  }
  kernel_.shared_arrays.push_back(SharedArrayDecl{type, std::move(name), count, it->second});
  return *this;
}

KernelBuilder& KernelBuilder::DynamicShared(std::string type, std::string name,
                                            uint32_t bytes) {
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
  } else {
    kernel_.dynamic_shared = DynamicSharedDecl{type, std::move(name), bytes};
  }
  return *this;
}

KernelBuilder& KernelBuilder::Stmt(std::string code) {
  KernelNode node;
  node.kind = KernelNode::Kind::kStatement;
  node.text = std::move(code);
  const std::string label = LabelOf(node);
  Append(std::move(node), label);
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
  const std::string label = LabelOf(node);
  Open(std::move(node), label);
  return *this;
}

KernelBuilder& KernelBuilder::EndRegion(std::string name) {
  Close(KernelNode::Kind::kRegion, "Region", name);
  return *this;
}

KernelBuilder& KernelBuilder::For(std::string var, Expr begin, Expr end, TripCount trip,
                                  const std::function<void()>& body) {
  return For(std::move(var), std::move(begin), std::move(end), Expr(1), trip, body);
}

KernelBuilder& KernelBuilder::For(std::string var, Expr begin, Expr end, Expr step,
                                  TripCount trip, const std::function<void()>& body) {
  BeginFor(std::move(var), std::move(begin), std::move(end), std::move(step), trip);
  body();
  return EndFor();
}

KernelBuilder& KernelBuilder::BeginFor(std::string var, Expr begin, Expr end, Expr step,
                                       TripCount trip) {
  KernelNode node;
  node.kind = KernelNode::Kind::kLoop;
  node.text = std::move(var);
  node.begin = begin.text();
  node.end = end.text();
  node.step = step.text();
  node.trip = trip;
  const std::string label = LabelOf(node);
  Open(std::move(node), label);
  return *this;
}

KernelBuilder& KernelBuilder::EndFor() {
  Close(KernelNode::Kind::kLoop, "For");
  return *this;
}

KernelBuilder& KernelBuilder::If(std::string condition,
                                 const std::function<void()>& then_body) {
  BeginIf(std::move(condition));
  then_body();
  return EndIf();
}

KernelBuilder& KernelBuilder::If(std::string condition, const std::function<void()>& then_body,
                                 const std::function<void()>& else_body) {
  BeginIf(std::move(condition));
  then_body();
  Else();
  else_body();
  return EndIf();
}

KernelBuilder& KernelBuilder::BeginIf(std::string condition) {
  KernelNode node;
  node.kind = KernelNode::Kind::kIf;
  node.text = std::move(condition);
  const std::string label = LabelOf(node);
  Open(std::move(node), label);
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
  const std::string label = LabelOf(node);
  Open(std::move(node), label);
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
  const std::string label = LabelOf(node);
  Open(std::move(node), label);
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
  const std::string label = LabelOf(node);
  Append(std::move(node), label);
  return *this;
}

KernelBuilder& KernelBuilder::Return() {
  KernelNode node;
  node.kind = KernelNode::Kind::kReturn;
  Append(std::move(node), "return");
  return *this;
}

absl::StatusOr<Kernel> KernelBuilder::Build() const {
  if (!error_.empty()) return absl::InvalidArgumentError(error_);
  if (!open_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Path(), ": ", open_.back().label,
        " is still open at Build(); close it (EndRegion/EndFor/EndIf/EndRole/EndRoles)"));
  }
  Kernel kernel = kernel_;
  RETURN_IF_ERROR(Validator(kernel).Run());
  uint32_t next = 0;
  AssignOrdinals(kernel.body, next);
  kernel.num_nodes = next;
  return kernel;
}

}  // namespace warptrace

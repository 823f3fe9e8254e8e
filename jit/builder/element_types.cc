#include "jit/builder/element_types.h"

#include "absl/strings/str_cat.h"

namespace warptrace {

const std::map<std::string, uint32_t>& ScalarTypes() {
  static const auto* types = new std::map<std::string, uint32_t>{
      {"bool", 1},          {"char", 1},     {"signed char", 1},
      {"unsigned char", 1}, {"short", 2},    {"unsigned short", 2},
      {"int", 4},           {"unsigned int", 4}, {"unsigned", 4},
      {"long long", 8},     {"unsigned long long", 8}, {"float", 4},
      {"double", 8},        {"__half", 2},   {"__nv_bfloat16", 2}};
  return *types;
}

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

std::optional<uint32_t> KnownElementBytes(const std::string& type) {
  static const auto* vectors = [] {
    auto* m = new std::map<std::string, uint32_t>{{"__half2", 4}, {"__nv_bfloat162", 4}};
    // vector_types.h: N components of the base type, no padding (a 3-vector is 3 x base).
    const std::pair<const char*, uint32_t> bases[] = {
        {"char", 1},     {"uchar", 1}, {"short", 2}, {"ushort", 2},   {"int", 4},
        {"uint", 4},     {"float", 4}, {"longlong", 8}, {"ulonglong", 8}, {"double", 8}};
    for (const auto& [base, bytes] : bases) {
      for (uint32_t n = 1; n <= 4; ++n) (*m)[absl::StrCat(base, n)] = bytes * n;
    }
    return m;
  }();
  if (auto it = ScalarTypes().find(type); it != ScalarTypes().end()) return it->second;
  if (auto it = vectors->find(type); it != vectors->end()) return it->second;
  return std::nullopt;
}

}  // namespace warptrace

// EnumTable: an enum's names in one place: its name, its parser and the "expected ..." list
// of the parser's message, all from one constexpr table, so a name and its parse can never
// disagree and no message lists the names by hand.
//
//   inline constexpr EnumTable<Placement, 3> kPlacements{"placement", {{
//       {Placement::kGlobal, "global"},
//       {Placement::kShared, "shared"},
//       {Placement::kAuto, "auto"},
//   }}};
//   kPlacements.Name(Placement::kShared)   // "shared"
//   kPlacements.Parse("glob")              // InvalidArgument: unknown placement "glob";
//                                          //   expected global, shared or auto
//
// An entry may carry a doc ("'x' (complete events)" in the expected list) and a later entry
// with a value already named is an alias: parsed, never printed ("b/e" for "be").
// Thread-safety: immutable.
#ifndef WARPTRACE_BASE_ENUM_TABLE_H_
#define WARPTRACE_BASE_ENUM_TABLE_H_

#include <array>
#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace warptrace {

template <typename E>
struct EnumName {
  E value;
  const char* name;
  const char* doc = nullptr;  // "complete events": shown after the name in the expected list
};

enum class EnumCase { kExact, kIgnore };

template <typename E, size_t N>
struct EnumTable {
  const char* what;  // "placement", "Chrome event style": names the enum in messages
  std::array<EnumName<E>, N> names;
  EnumCase parse_case = EnumCase::kExact;

  // The value's (first) name; `missing` ("?") for a value the table lacks (a corrupted one).
  constexpr const char* Name(E value, const char* missing = "?") const {
    for (const EnumName<E>& n : names) {
      if (n.value == value) return n.name;
    }
    return missing;
  }

  // Whether every value in [0, count) has a name (for a static_assert beside the table).
  constexpr bool Covers(size_t count) const {
    for (size_t v = 0; v < count; ++v) {
      bool found = false;
      for (const EnumName<E>& n : names) found = found || static_cast<size_t>(n.value) == v;
      if (!found) return false;
    }
    return true;
  }

  // The value named `name`. InvalidArgument: `unknown <what> "<name>"; expected a, b or c`.
  absl::StatusOr<E> Parse(absl::string_view name) const {
    const std::string lower = absl::AsciiStrToLower(name);
    for (const EnumName<E>& n : names) {
      if (name == n.name || (parse_case == EnumCase::kIgnore && lower == n.name)) {
        return n.value;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("unknown ", what, " \"", name, "\"; expected ", Expected()));
  }

  // "a, b or c" (with each doc: "'x' (complete events), 'be' (B/E pairs) or ..."), aliases
  // left out.
  std::string Expected() const {
    std::string out;
    size_t printed = 0;
    size_t total = 0;
    for (size_t i = 0; i < N; ++i) total += IsAlias(i) ? 0 : 1;
    for (size_t i = 0; i < N; ++i) {
      if (IsAlias(i)) continue;
      ++printed;
      absl::StrAppend(&out, printed == 1 ? "" : printed == total ? " or " : ", ");
      if (names[i].doc != nullptr) {
        absl::StrAppend(&out, "'", names[i].name, "' (", names[i].doc, ")");
      } else {
        absl::StrAppend(&out, names[i].name);
      }
    }
    return out;
  }

 private:
  constexpr bool IsAlias(size_t i) const {
    for (size_t j = 0; j < i; ++j) {
      if (names[j].value == names[i].value) return true;
    }
    return false;
  }
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_ENUM_TABLE_H_

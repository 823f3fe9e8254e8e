#include "jit/cost/sass_counts.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace warptrace {

namespace {

// How far before a retry block's TRYWAIT its spin may branch (a few instructions: a
// back-off before the try).
constexpr uint64_t kRetryWindow = 0x40;

// One instruction of a cuobjdump -sass listing: its address and its text after it.
struct SassLine {
  uint64_t address = 0;
  absl::string_view text;
};

std::vector<SassLine> SassLines(absl::string_view sass) {
  std::vector<SassLine> out;
  for (absl::string_view line : absl::StrSplit(sass, '\n')) {
    // "        /*0570*/                   CS2R.32 R9, SR_CLOCKLO ;   /* 0x...7805 */"
    const size_t open = line.find("/*");
    const size_t close = line.find("*/");
    if (open == absl::string_view::npos || close == absl::string_view::npos || close < open) {
      continue;
    }
    uint64_t address = 0;
    if (!absl::SimpleHexAtoi(line.substr(open + 2, close - open - 2), &address)) continue;
    absl::string_view text = line.substr(close + 2);
    text = absl::StripAsciiWhitespace(text.substr(0, text.find(';')));  // no encoding
    if (text.empty()) continue;
    out.push_back({address, text});
  }
  return out;
}

// The target of a branch instruction ("@!P1 BRA 0x1c30 ;"), if `text` is one.
std::optional<uint64_t> BranchTarget(absl::string_view text) {
  std::vector<absl::string_view> tokens = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  size_t t = 0;
  if (t < tokens.size() && absl::StartsWith(tokens[t], "@")) ++t;
  if (t >= tokens.size() || !absl::StartsWith(tokens[t], "BRA")) return std::nullopt;
  for (size_t i = tokens.size(); i-- > t + 1;) {
    absl::string_view token = tokens[i];
    absl::ConsumeSuffix(&token, ";");
    if (absl::ConsumePrefix(&token, "0x")) {
      uint64_t target = 0;
      if (absl::SimpleHexAtoi(token, &target)) return target;
    }
  }
  return std::nullopt;
}

bool IsClockRead(absl::string_view text) {
  return absl::StrContains(text, "SR_CLOCKLO") &&
         (absl::StrContains(text, "S2R") || absl::StrContains(text, "S2UR") ||
          absl::StrContains(text, "CS2R"));
}

// Whether lines[i], a TRYWAIT, heads the out-of-line retry block ptxas places after the
// function's EXIT for a wait it also tried inline: "TRYWAIT; @!P BRA <it, or just before>;
// BRA <back>". Such a block is the same wait's slow path, not a second wait.
bool IsRetryBlock(const std::vector<SassLine>& lines, size_t i) {
  if (i + 2 >= lines.size() || !absl::StartsWith(lines[i + 1].text, "@")) return false;
  const std::optional<uint64_t> spin = BranchTarget(lines[i + 1].text);
  const std::optional<uint64_t> back = BranchTarget(lines[i + 2].text);
  return spin.has_value() && back.has_value() && !absl::StartsWith(lines[i + 2].text, "@") &&
         *spin <= lines[i].address && *spin + kRetryWindow >= lines[i].address;
}

// The KeySassOpcodes() class of one instruction's opcode token ("SYNCS.EXCH.64"): its
// opcode before the first '.', or for SYNCS its sub-opcode class; empty for a TRYWAIT that
// heads a retry block (not counted).
std::string KeyClass(absl::string_view token, bool retry_block) {
  const absl::string_view opcode = token.substr(0, token.find('.'));
  if (opcode != "SYNCS") return std::string(opcode);
  if (absl::StartsWith(token, "SYNCS.ARRIVE")) {
    return absl::StrContains(token, ".RED") ? "SYNCS.ARRIVE.RED" : "SYNCS.ARRIVE";
  }
  if (absl::StartsWith(token, "SYNCS.EXCH")) return "SYNCS.EXCH";
  if (absl::StartsWith(token, "SYNCS.PHASECHK")) {
    if (!absl::StrContains(token, ".TRYWAIT")) return "SYNCS.PHASECHK";
    return retry_block ? "" : "SYNCS.TRYWAIT";
  }
  return "SYNCS";
}

}  // namespace

const std::vector<std::string>& KeySassOpcodes() {
  static const std::vector<std::string>* opcodes = new std::vector<std::string>{
      "HGMMA",         "UTMALDG",      "UTMASTG",          "UBLKCP",
      "LDGSTS",        "LDSM",         "STSM",             "HMMA",
      "SYNCS.EXCH",    "SYNCS.ARRIVE", "SYNCS.ARRIVE.RED", "SYNCS.TRYWAIT",
      "SYNCS.PHASECHK", "SYNCS",       "BAR",              "LDL",
      "STL"};
  return *opcodes;
}

std::vector<std::pair<std::string, uint64_t>> CountKeySassInstructions(absl::string_view sass) {
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (const std::string& opcode : KeySassOpcodes()) counts.push_back({opcode, 0});
  const std::vector<SassLine> lines = SassLines(sass);
  for (size_t i = 0; i < lines.size(); ++i) {
    // "@!P0 HGMMA.64x128x16.F32.BF16 gdesc[UR4], ..."
    std::vector<absl::string_view> tokens =
        absl::StrSplit(lines[i].text, ' ', absl::SkipWhitespace());
    size_t t = 0;
    if (t < tokens.size() && absl::StartsWith(tokens[t], "@")) ++t;  // predicate
    if (t >= tokens.size()) continue;
    const std::string key = KeyClass(tokens[t], IsRetryBlock(lines, i));
    for (auto& [name, count] : counts) {
      if (key == name) ++count;
    }
  }
  return counts;
}

uint64_t CountClockReads(absl::string_view sass) {
  uint64_t reads = 0;
  for (absl::string_view line : absl::StrSplit(sass, '\n')) {
    if (IsClockRead(line)) ++reads;
  }
  return reads;
}

namespace {

bool IsGlobaltimerRead(absl::string_view text) {
  return absl::StrContains(text, "SR_GLOBALTIMER");
}

// Whether the loop `body` (indices into `lines`, its header `header`) is the recorder
// epilogue's (LoopSass).
bool IsEpilogueLoop(const std::vector<SassLine>& lines, const std::vector<size_t>& body,
                    size_t header) {
  for (size_t i : body) {
    if (IsClockRead(lines[i].text)) return false;
  }
  size_t first_timer = lines.size();  // the prologue's globaltimer read
  for (size_t i = 0; i < lines.size(); ++i) {
    if (IsGlobaltimerRead(lines[i].text)) {
      first_timer = i;
      break;
    }
  }
  std::vector<size_t> reads;  // the last two timer reads before the loop, latest first
  for (size_t i = header; i-- > 0 && reads.size() < 2;) {
    if (IsClockRead(lines[i].text) || IsGlobaltimerRead(lines[i].text)) reads.push_back(i);
  }
  return reads.size() == 2 && IsClockRead(lines[reads[0]].text) &&
         IsGlobaltimerRead(lines[reads[1]].text) && reads[1] != first_timer;
}

// The instructions control may go to after each one: the next (unless an unpredicated
// BRA, EXIT or RET) and a branch's target.
std::vector<std::vector<size_t>> Successors(const std::vector<SassLine>& lines) {
  std::vector<std::vector<size_t>> next(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    std::vector<absl::string_view> tokens =
        absl::StrSplit(lines[i].text, ' ', absl::SkipWhitespace());
    const bool predicated = !tokens.empty() && absl::StartsWith(tokens[0], "@");
    const absl::string_view op = tokens.size() > (predicated ? 1u : 0u)
                                     ? tokens[predicated ? 1 : 0]
                                     : absl::string_view();
    const bool jumps = absl::StartsWith(op, "BRA") || absl::StartsWith(op, "EXIT") ||
                       absl::StartsWith(op, "RET");
    if (const std::optional<uint64_t> target = BranchTarget(lines[i].text)) {
      const auto it = std::lower_bound(
          lines.begin(), lines.end(), *target,
          [](const SassLine& l, uint64_t address) { return l.address < address; });
      if (it != lines.end()) next[i].push_back(static_cast<size_t>(it - lines.begin()));
    }
    if ((predicated || !jumps) && i + 1 < lines.size()) next[i].push_back(i + 1);
  }
  return next;
}

// The natural loop of the backward branch at `latch` to `header`: the instructions that
// reach the latch without passing the header, and the header; empty when the header does
// not dominate the latch (a jump back from code placed out of line, e.g. the retry of an
// mbarrier wait ptxas moves to the function's end, is no loop).
std::vector<size_t> NaturalLoop(const std::vector<std::vector<size_t>>& next,
                                const std::vector<std::vector<size_t>>& prev, size_t header,
                                size_t latch) {
  // Every instruction `from` reaches along `edges` without passing the header.
  const auto reach = [&](const std::vector<std::vector<size_t>>& edges, size_t from) {
    std::vector<bool> seen(edges.size(), false);
    seen[header] = true;
    std::vector<size_t> work = {from}, out;
    seen[from] = true;
    while (!work.empty()) {
      const size_t i = work.back();
      work.pop_back();
      out.push_back(i);
      for (size_t j : edges[i]) {
        if (seen[j]) continue;
        seen[j] = true;
        work.push_back(j);
      }
    }
    return out;
  };
  if (header != 0) {  // the entry is the first instruction
    const std::vector<size_t> from_entry = reach(next, 0);
    if (std::find(from_entry.begin(), from_entry.end(), latch) != from_entry.end()) return {};
  }
  std::vector<size_t> body = reach(prev, latch);
  if (latch != header) body.push_back(header);
  return body;
}

}  // namespace

LoopSass CountLoopSass(absl::string_view sass) {
  const std::vector<SassLine> lines = SassLines(sass);
  const std::vector<std::vector<size_t>> next = Successors(lines);
  std::vector<std::vector<size_t>> prev(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t j : next[i]) prev[j].push_back(i);
  }
  // 1: in a kernel loop, 2: only in the epilogue's.
  std::vector<int> where(lines.size(), 0);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::optional<uint64_t> target = BranchTarget(lines[i].text);
    if (!target.has_value() || *target >= lines[i].address || next[i].empty()) continue;
    const size_t header = next[i].front();  // the target (Successors puts it first)
    const std::vector<size_t> body = NaturalLoop(next, prev, header, i);
    if (body.empty()) continue;
    const int mark = IsEpilogueLoop(lines, body, header) ? 2 : 1;
    for (size_t j : body) where[j] = where[j] == 1 ? 1 : mark;
  }
  LoopSass out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (where[i] == 1) {
      ++out.instructions;
      if (IsClockRead(lines[i].text)) ++out.clock_reads;
    } else if (where[i] == 2) {
      ++out.epilogue_instructions;
    }
  }
  return out;
}

}  // namespace warptrace

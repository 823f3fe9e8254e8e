#include "profiler/imports/sidecar.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"

namespace warptrace {
namespace {

absl::string_view View(llvm::StringRef s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string ResolveTracePrefix(absl::string_view path) {
  if (llvm::sys::fs::exists(absl::StrCat(path, ".json"))) return std::string(path);
  for (absl::string_view suffix : {".bin", ".json"}) {
    if (!absl::EndsWith(path, suffix)) continue;
    const absl::string_view prefix = path.substr(0, path.size() - suffix.size());
    if (!prefix.empty() && llvm::sys::fs::exists(absl::StrCat(prefix, ".json"))) {
      return std::string(prefix);
    }
  }
  return std::string(path);
}

absl::StatusOr<LoadedTrace> LoadTrace(absl::string_view given, const LoadOptions& options) {
  const std::string prefix = ResolveTracePrefix(given);
  const std::string sidecar_path = absl::StrCat(prefix, ".json");
  const std::string bin_path = absl::StrCat(prefix, ".bin");
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> sidecar_file,
                   MapFile(sidecar_path, {.role = "trace sidecar"}));
  const absl::string_view sidecar = View(sidecar_file->getBuffer());
  absl::StatusOr<std::string> format = SidecarFormat(sidecar);
  if (!format.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(sidecar_path, ": ", format.status().message()));
  }
  if (*format != kSidecarFormat) {
    auto it = options.importers.find(*format);
    if (it == options.importers.end() || !it->second) {
      std::vector<std::string> known = {kSidecarFormat};
      for (const auto& [name, importer] : options.importers) {
        if (importer) known.push_back(name);
      }
      std::sort(known.begin() + 1, known.end());
      return absl::InvalidArgumentError(absl::StrCat(
          sidecar_path, " has format \"", *format,
          "\", for which no importer is registered (this reader knows: ",
          absl::StrJoin(known, ", "), ")"));
    }
    return it->second(prefix, sidecar);
  }
  absl::StatusOr<TraceLayout> layout = ParseLayoutJson(sidecar);
  if (!layout.ok()) {
    return absl::Status(layout.status().code(),
                        absl::StrCat(sidecar_path, ": ", layout.status().message()));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<llvm::MemoryBuffer> bin,
                   MapFile(bin_path, {.role = "trace buffer"}));
  RETURN_IF_ERROR(CheckBufferBytes(*layout, View(bin->getBuffer()), bin_path));
  // In place when the mapped words are host-order and aligned (a mapping is page-aligned):
  // the dump then holds the input once, mapped, not a copy of it.
  if (llvm::sys::IsLittleEndianHost &&
      reinterpret_cast<uintptr_t>(bin->getBufferStart()) % alignof(uint32_t) == 0) {
    return LoadedTrace{*std::move(layout), TraceWords(std::move(bin))};
  }
  ASSIGN_OR_RETURN(std::vector<uint32_t> words,
                   WordsFromBytes(*layout, View(bin->getBuffer()), bin_path));
  return LoadedTrace{*std::move(layout), std::move(words)};
}

}  // namespace warptrace

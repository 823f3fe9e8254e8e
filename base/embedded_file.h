// EmbeddedFile: a file held in memory, by the name it is included or reported under and its
// text. The device headers compiled into the binary (tools/embed_files.py generates their
// tables) and the sources handed to a compiler are both lists of these.
//
//   std::vector<EmbeddedFile> files = {{"gemm.cu", source}, {"recorder.cuh", recorder}};
#ifndef WARPTRACE_BASE_EMBEDDED_FILE_H_
#define WARPTRACE_BASE_EMBEDDED_FILE_H_

#include <string>

namespace warptrace {

struct EmbeddedFile {
  std::string name;      // include name, as written in #include "...", or as a log names it
  std::string contents;  // the file's text
};

}  // namespace warptrace

#endif  // WARPTRACE_BASE_EMBEDDED_FILE_H_

// EventTemplate: a JSON event serialized once by llvm::json::OStream, with holes for the
// numbers that change from event to event, so the bulk of a trace is written with a few
// appends per event while json::OStream still does every name, key and escape. Used by the
// Chrome trace writers (chrome_trace.h, mosaic_trace.h).
//
//   EventTemplate t = EventTemplate::Build([](llvm::json::OStream& json) {
//     json.object([&] {
//       json.attribute("name", "load");
//       json.attributeBegin("ts");
//       EventTemplate::Hole(json);
//       json.attributeEnd();
//     });
//   });
//   const llvm::StringRef values[] = {"12.5"};
//   json.rawValue([&](llvm::raw_ostream& os) { t.Write(os, values); });
#ifndef WARPTRACE_PROFILER_OUTPUTS_EVENT_TEMPLATE_H_
#define WARPTRACE_PROFILER_OUTPUTS_EVENT_TEMPLATE_H_

#include <cstddef>
#include <new>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace warptrace {

// A json::OStream that may be abandoned half-written (a dump that stopped, or an exception
// unwinding its writer): llvm::json::OStream's destructor asserts that every begin was
// ended, and ending them would write, which a destructor must not. An abandoned stream is
// therefore never destroyed: its nesting stack (a SmallVector of 16, deeper than the writers
// nest) is inline, so nothing leaks. A finished one is destroyed as usual.
class AbandonableJson {
 public:
  explicit AbandonableJson(llvm::raw_ostream& os) { new (storage_) llvm::json::OStream(os); }
  ~AbandonableJson() {
    if (finished_) get().~OStream();
  }
  AbandonableJson(const AbandonableJson&) = delete;
  AbandonableJson& operator=(const AbandonableJson&) = delete;

  llvm::json::OStream& get() {
    return *std::launder(reinterpret_cast<llvm::json::OStream*>(storage_));
  }
  void MarkFinished() { finished_ = true; }

 private:
  alignas(llvm::json::OStream) unsigned char storage_[sizeof(llvm::json::OStream)];
  bool finished_ = false;
};

// An event object serialized once by json::OStream with holes where per-unit and per-event
// values go; writing an event fills the holes. A hole is a raw \x01 byte: json::OStream
// escapes every control character inside strings and keys (as \u0001), so a raw \x01 in its
// output can only be a hole.
class EventTemplate {
 public:
  static constexpr char kHole = '\x01';

  // `emit` writes one JSON value to the stream, calling Hole() for each hole.
  template <typename Emit>
  static EventTemplate Build(Emit emit) {
    std::string text;
    {
      llvm::raw_string_ostream os(text);
      // An exception out of `emit` (an allocation failing under a memory limit) must not
      // meet json::OStream's destructor, which asserts every begin was ended.
      AbandonableJson json(os);
      emit(json.get());
      json.MarkFinished();
      os.flush();
    }
    EventTemplate t;
    size_t begin = 0;
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == kHole) {
        t.pieces_.push_back(text.substr(begin, i - begin));
        begin = i + 1;
      }
    }
    t.pieces_.push_back(text.substr(begin));
    return t;
  }
  static void Hole(llvm::json::OStream& json) { json.rawValue(llvm::StringRef(&kHole, 1)); }

  size_t holes() const { return pieces_.size() - 1; }

  // Writes the template with values[i] in hole i; values has holes() entries.
  void Write(llvm::raw_ostream& os, const llvm::StringRef* values) const {
    os << pieces_[0];
    for (size_t i = 1; i < pieces_.size(); ++i) os << values[i - 1] << pieces_[i];
  }

  // The text from hole `first` on, with values[i] in hole first + i: the part of an event
  // that is the same for every event of a unit.
  std::string Tail(size_t first, const llvm::StringRef* values) const {
    std::string out = pieces_[first];
    for (size_t i = first + 1; i < pieces_.size(); ++i) {
      out.append(values[i - first - 1].data(), values[i - first - 1].size());
      out += pieces_[i];
    }
    return out;
  }
  const std::string& piece(size_t i) const { return pieces_[i]; }

 private:
  std::vector<std::string> pieces_;
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_OUTPUTS_EVENT_TEMPLATE_H_

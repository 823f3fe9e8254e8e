// UnitFeeder: a sink's per-unit work on a thread of its own. Add copies each unit's timeline
// into a batch (units of ~16 Ki events); the feeder's thread calls `fn` on the units of whole
// batches, in the order they were added, while the caller goes on with the next units. The
// Perfetto and Chrome sinks use it with threads >= 2 (perfetto_sink.h, chrome_trace_sink.h):
// their writer's bytes are made on one core, and a unit's data crosses between cores once,
// as one copy.
//
//   UnitFeeder feeder([&](const UnitTimeline& u) { return writer.AddUnit(u); });
//   for (...) RETURN_IF_ERROR(feeder.Add(unit));   // fn's first error, once it happened
//   RETURN_IF_ERROR(feeder.Finish());               // every unit through fn
//   writer.End();                                   // the caller's thread again
//
// Errors: fn's first error, returned by a later Add or by Finish; fn is not called after it.
// An exception fn throws on the feeder's thread (std::bad_alloc) is rethrown by a later Add
// or by Finish, on the caller's thread, in the same way.
// Memory: three batches, whose unit storage is reused. Thread-safety: Add and Finish belong
// to one caller thread; fn runs on the feeder's thread only, and everything fn did is
// visible to the caller once Finish returned. Destroying a feeder without Finish (a dump
// that stopped) drops the batches not yet started and waits for the one running.
#ifndef WARPTRACE_PROFILER_DUMP_UNIT_FEEDER_H_
#define WARPTRACE_PROFILER_DUMP_UNIT_FEEDER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "profiler/timeline/timeline_types.h"

namespace warptrace {

class UnitFeeder {
 public:
  using Fn = std::function<absl::Status(const UnitTimeline& unit)>;

  explicit UnitFeeder(Fn fn);
  ~UnitFeeder();
  UnitFeeder(const UnitFeeder&) = delete;
  UnitFeeder& operator=(const UnitFeeder&) = delete;

  // Copies `unit` into the batch being filled (into the storage of a unit fed before, so
  // without allocating once the batches have grown); hands the batch over when full.
  absl::Status Add(const UnitTimeline& unit);

  // Hands over the last batch and waits until fn has seen every unit.
  absl::Status Finish();

 private:
  // Units of one batch: enough events that handing a batch over costs little against
  // writing it, few enough that the feeder starts early.
  static constexpr uint64_t kBatchEvents = uint64_t{1} << 14;
  // Batches beyond the one being filled: one being written, one waiting.
  static constexpr int kSpareBatches = 2;

  struct Batch {
    std::vector<UnitTimeline> units;  // [0, count) are this batch's; the rest are storage
    size_t count = 0;
    uint64_t events = 0;
  };

  absl::Status Submit();
  void Run();

  const Fn fn_;
  std::unique_ptr<Batch> filling_;  // the caller's
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Batch>> queue_;  // handed over, in order
  std::vector<std::unique_ptr<Batch>> free_;
  bool busy_ = false;  // the thread is running fn over a batch
  bool stop_ = false;
  // The error that stands for an exception of fn, made before the thread starts: the
  // handler copies it (a reference count), since making a Status allocates, and under
  // std::bad_alloc that allocation would throw again inside the handler (std::terminate).
  const absl::Status threw_ = absl::InternalError("the feeder's function threw");
  absl::Status status_;  // fn's first error
  std::exception_ptr thrown_;  // or the exception fn threw (status_ is then an error too)
  std::thread thread_;   // last: started once everything above is
};

}  // namespace warptrace

#endif  // WARPTRACE_PROFILER_DUMP_UNIT_FEEDER_H_

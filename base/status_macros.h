// Error-propagation macros for absl::Status / absl::StatusOr.
//
// Debian's absl (20220623) ships no status_macros.h, so the project keeps this one small
// header. Semantics follow the macros used across Google code:
//
//   RETURN_IF_ERROR(expr);            // expr is an absl::Status; returns it if not OK.
//   ASSIGN_OR_RETURN(auto x, expr);   // expr is an absl::StatusOr<T>; returns its status
//                                     // if not OK, else moves the value into `x`.
#ifndef WARPTRACE_BASE_STATUS_MACROS_H_
#define WARPTRACE_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define WARPTRACE_CONCAT_INNER_(a, b) a##b
#define WARPTRACE_CONCAT_(a, b) WARPTRACE_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                      \
  do {                                             \
    ::absl::Status warptrace_status_ = (expr);     \
    if (!warptrace_status_.ok()) {                 \
      return warptrace_status_;                    \
    }                                              \
  } while (false)

#define WARPTRACE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                     \
  if (!statusor.ok()) {                                       \
    return std::move(statusor).status();                      \
  }                                                           \
  lhs = std::move(statusor).value()

#define ASSIGN_OR_RETURN(lhs, expr)                                                \
  WARPTRACE_ASSIGN_OR_RETURN_IMPL_(WARPTRACE_CONCAT_(warptrace_statusor_, __LINE__), \
                                   lhs, expr)

#endif  // WARPTRACE_BASE_STATUS_MACROS_H_

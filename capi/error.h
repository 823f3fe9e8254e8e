// Private to capi/: the error handle behind warptrace.h's opaque warptrace_error, shared by
// the files that implement the C API (warptrace.cc, tables.cc).
#ifndef WARPTRACE_CAPI_ERROR_H_
#define WARPTRACE_CAPI_ERROR_H_

#include <string>

#include "capi/warptrace.h"

struct warptrace_error {
  warptrace_code code = WARPTRACE_OK;
  std::string message;
};

#endif  // WARPTRACE_CAPI_ERROR_H_

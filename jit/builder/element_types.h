// The C++ types the builder knows the size of: the scalar types of parameters and shared
// arrays, and CUDA's vector types (vector_types.h: char2 ... double4, with their sizes), for
// shared arrays. Internal to jit/builder.
#ifndef WARPTRACE_JIT_BUILDER_ELEMENT_TYPES_H_
#define WARPTRACE_JIT_BUILDER_ELEMENT_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace warptrace {

// The scalar types a parameter or shared array may have, with their sizes in bytes.
const std::map<std::string, uint32_t>& ScalarTypes();

// Collapses runs of spaces and trims; "const  float *" -> "const float*".
std::string NormalizeType(const std::string& type);

// The size of a shared array element of type `type` (normalized): a scalar type, a CUDA
// vector type (float2: 8, int3: 12, __half2: 4, ...), or nullopt for a type the builder
// does not know.
std::optional<uint32_t> KnownElementBytes(const std::string& type);

}  // namespace warptrace

#endif  // WARPTRACE_JIT_BUILDER_ELEMENT_TYPES_H_

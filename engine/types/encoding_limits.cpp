// The process's encoding limits (encoding_limits.h).
#include "engine/types/encoding_limits.h"

namespace ringkv::engine {

EncodingLimits& encoding_limits() {
  static EncodingLimits limits;
  return limits;
}

}  // namespace ringkv::engine

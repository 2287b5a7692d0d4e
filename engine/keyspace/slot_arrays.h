// The store's slot arrays: allocated zeroed (mapped directly when large, so growth never memsets
// megabytes inside one command), counted as used_memory counts them, and released in the
// background when unmapping them could stall the event loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/background_jobs.h"

namespace ringkv::engine {

// The one background thread that frees memory handed over by stores (FLUSHALL ASYNC, big tables
// left by a resize), so the event loop never stalls on millions of free() calls. It drains its
// queue before the process exits.
common::BackgroundJobs& reclaimer();

// A zeroed array of `cap` slots. Throws std::bad_alloc when memory is exhausted.
uint64_t* allocate_slots(size_t cap);

// Bytes a slot array of `cap` slots holds, as used_memory counts them.
size_t slots_footprint(const uint64_t* slots, size_t cap);

// Frees a slot array at once.
void deallocate_slots(uint64_t* slots, size_t cap);

// Frees a slot array (nullptr is ignored), in the background when it is big.
void release_slots(uint64_t* slots, size_t cap);

}  // namespace ringkv::engine

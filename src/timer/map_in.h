// MapIn: maps in fresh memory ahead of the writes that would fault it in.
//
// On the test VM a page fault is a trip to the hypervisor, 11-12 µs per
// 4 KiB page; madvise(MADV_POPULATE_WRITE) maps the same pages in at about
// 1 µs each in bulk (24 MB: 5-6 ms against 68-70 ms) and 3 µs for a single
// page. The wheel's and the job table's growing structures call it for memory
// they are about to fill.
#pragma once

#include <cstddef>

namespace ax::internal {

// Maps in every page that holds part of [p, p + bytes), in one system call.
// Only saves page faults: on failure (a kernel before 5.14) the writes fault
// the pages in as before.
void MapIn(const void* p, size_t bytes);

}  // namespace ax::internal

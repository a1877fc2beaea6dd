// How a gemv's rows are split across the pool's threads. Each thread owns a
// share of the rows, walked as bands (row_bands.h), and claims a few passes at
// a time from its front; a thread whose share is done takes the back half of
// the largest share left unfinished. With fixed tasks of 512 KB, handed out in
// turn, the launching thread waited for the other's last task 3-11% of a
// decoded token (a thread runs slower while another guest shares its core, or
// wakes late); more or tapering tasks shortened that wait only by cutting
// every read stream short. Here the threads finish within a claim of each
// other, and only what was stolen is read as short streams
// (docs/performance.md, thirteenth session).
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "cpu/row_bands.h"
#include "host/thread_pool.h"

namespace qwen35::cpu {

// Launches whose rows weigh at most this many bytes in all run on the
// launching thread alone, where handing rows to another thread would cost more
// than reading them (256 KB, gemv_scheduler.cpp).
size_t solo_launch_bytes();
// Forces solo_launch_bytes() (1: every launch of two rows or more is shared;
// 0: the default again; at most 16 MiB), process-wide: the tuning knob
// solo-bytes. The results do not depend on it, to the bit.
void set_solo_launch_bytes(size_t bytes);

// body(segment, passes) computes the rows of `passes` of matrix `segment`.
using RowPassesBody = std::function<void(size_t segment, const RowPasses& passes)>;

// Runs body over all rows of the matrices of one launch (segment_rows[i]
// rows of row_bytes each: one matrix, or gate and up), each walked as `bands`
// bands, on every thread of the pool; returns when all are done.
void parallel_row_passes(ThreadPool& pool, std::span<const size_t> segment_rows, size_t bands, size_t row_bytes,
                         const RowPassesBody& body);

// One matrix read a row at a time (the Gated DeltaNet kernels' channels,
// attention's pieces): body(begin, end) computes rows [begin, end).
template <typename Body>
void parallel_gemv_rows(ThreadPool& pool, size_t rows, size_t row_bytes, const Body& body) {
  const size_t segments[] = {rows};
  parallel_row_passes(pool, segments, 1, row_bytes,
                      [&](size_t, const RowPasses& p) { body(p.begin + p.first, p.begin + p.last); });
}

}  // namespace qwen35::cpu

// HugePageAllocator: a std::allocator for the few big arrays of a report on
// tens of millions of records (MetricTable's columns). Blocks of 2 MiB and
// more are 2 MiB-aligned and marked MADV_HUGEPAGE, so where transparent huge
// pages are `madvise` (Debian's default) the kernel backs them with 2 MiB
// pages: measured here on 10 M records, a 4 KiB page fault per 4 KiB of
// column was half the report's time (docs/performance.md). Smaller blocks, and
// kernels that say no, get ordinary pages; nothing else changes. Stateless.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace fdrill {

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePage) return std::allocator<T>().allocate(n);
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (p == nullptr) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: refused, the pages are ordinary
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kHugePage) return std::allocator<T>().deallocate(p, n);
    std::free(p);
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace fdrill

#pragma once
// A 64-bit content hash: stable across runs and good enough to tell candidates (and the small
// values the workers read from content-addressed files) apart. One definition for the minifier.
//
// FNV-1a's multiply, but eight bytes a step with the high half folded back into the low one
// after each multiply (a multiply only carries bits upward: without the fold, two changes in a
// word's top bit could cancel). Byte by byte, hashing a real model's parameters once (100 MB)
// took a sizable part of a minify; a word at a time it takes a few tens of milliseconds.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tsrepro {

inline constexpr uint64_t kContentHashSeed = 1469598103934665603ull;

inline void content_hash_update(uint64_t& h, const void* data, size_t size) {
  constexpr uint64_t kPrime = 1099511628211ull;
  const auto* bytes = static_cast<const unsigned char*>(data);
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    h = (h ^ word) * kPrime;
    h ^= h >> 32;
  }
  for (; i < size; ++i) {
    h = (h ^ bytes[i]) * kPrime;
    h ^= h >> 32;
  }
}

}  // namespace tsrepro

#pragma once
// FNV-1a over bytes: stable across runs and good enough to tell candidates (and the small values
// the workers read from content-addressed files) apart. One definition for the minifier.

#include <cstddef>
#include <cstdint>

namespace tsrepro {

inline constexpr uint64_t kContentHashSeed = 1469598103934665603ull;

inline void content_hash_update(uint64_t& h, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
}

}  // namespace tsrepro

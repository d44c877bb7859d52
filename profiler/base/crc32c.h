// CRC-32C (Castagnoli), as LevelDB tables and TensorFlow tensor bundles use
// it. Debian 12 ships no CRC-32C library (and abseil 20220623 has no crc
// module), so this is a small table-driven implementation.
#ifndef TFPROF_PROFILER_BASE_CRC32C_H_
#define TFPROF_PROFILER_BASE_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tfprof {

// CRC-32C (Castagnoli polynomial, reflected 0x82F63B78) of data[0, n),
// continuing from `crc` (the CRC of the bytes before).
uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n);
inline uint32_t Crc32c(const char* data, size_t n) {
  return Crc32cExtend(0, data, n);
}

// The masked form that LevelDB tables and TensorFlow bundles store (a CRC
// of data that itself holds CRCs is then not a CRC of a CRC).
uint32_t MaskCrc(uint32_t crc);
uint32_t UnmaskCrc(uint32_t masked);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_CRC32C_H_

#include "runner/formats/zip_records.h"

#include <fstream>
#include <stdexcept>
#include <vector>

namespace tsrepro {
namespace {

uint64_t little_endian(const std::string& bytes, size_t at, size_t width) {
  if (at + width > bytes.size()) throw std::runtime_error("zip directory truncated");
  uint64_t value = 0;
  for (size_t i = width; i-- > 0;) value = (value << 8) | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

std::string read_range(std::ifstream& in, uint64_t offset, uint64_t size) {
  std::string out(size, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size) throw std::runtime_error("zip directory truncated");
  return out;
}

}  // namespace

std::map<std::string, uint64_t> zip_record_sizes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot open");
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  // The end-of-central-directory record: 22 bytes plus a comment of at most 64 KiB, at the end.
  const uint64_t tail_size = std::min<uint64_t>(file_size, 22 + 65535);
  const std::string tail = read_range(in, file_size - tail_size, tail_size);
  size_t eocd = tail.rfind(std::string("PK\x05\x06", 4));
  if (eocd == std::string::npos) throw std::runtime_error("no zip end-of-directory record");
  uint64_t entries = little_endian(tail, eocd + 10, 2);
  uint64_t directory_size = little_endian(tail, eocd + 12, 4);
  uint64_t directory_offset = little_endian(tail, eocd + 16, 4);
  // Zip64: the locator sits just before, pointing at the zip64 end-of-directory record.
  if (eocd >= 20 && tail.compare(eocd - 20, 4, std::string("PK\x06\x07", 4)) == 0) {
    const uint64_t zip64_eocd = little_endian(tail, eocd - 20 + 8, 8);
    if (zip64_eocd + 56 > file_size) throw std::runtime_error("zip64 directory beyond the file");
    const std::string record = read_range(in, zip64_eocd, 56);
    entries = little_endian(record, 32, 8);
    directory_size = little_endian(record, 40, 8);
    directory_offset = little_endian(record, 48, 8);
  }
  if (directory_offset > file_size || directory_size > file_size - directory_offset)
    throw std::runtime_error("zip directory beyond the file");
  const std::string directory = read_range(in, directory_offset, directory_size);

  std::map<std::string, uint64_t> sizes;
  size_t at = 0;
  for (uint64_t i = 0; i < entries; ++i) {
    if (little_endian(directory, at, 4) != 0x02014b50) throw std::runtime_error("bad zip directory entry");
    uint64_t size = little_endian(directory, at + 24, 4);
    const size_t name_length = little_endian(directory, at + 28, 2);
    const size_t extra_length = little_endian(directory, at + 30, 2);
    const size_t comment_length = little_endian(directory, at + 32, 2);
    if (at + 46 + name_length + extra_length > directory.size()) throw std::runtime_error("zip directory truncated");
    std::string name = directory.substr(at + 46, name_length);
    // A zip64 extra field (id 1) holds the sizes that did not fit 32 bits, uncompressed first.
    for (size_t extra = at + 46 + name_length; extra + 4 <= at + 46 + name_length + extra_length;) {
      const uint64_t id = little_endian(directory, extra, 2), length = little_endian(directory, extra + 2, 2);
      if (id == 1 && size == 0xffffffff && length >= 8) size = little_endian(directory, extra + 4, 8);
      extra += 4 + length;
    }
    const size_t slash = name.find('/');
    sizes[slash == std::string::npos ? name : name.substr(slash + 1)] = size;
    at += 46 + name_length + extra_length + comment_length;
  }
  return sizes;
}

}  // namespace tsrepro

#include "runner/formats/torch_save_reader.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <unordered_map>
#include <utility>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <c10/util/Exception.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include "runner/formats/sound_values.h"
#include "runner/formats/zip_records.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

// ---------------------------------------------------------------------------------------------
// Pickle opcode table. Only what is needed to walk a stream op by op and follow the stack
// shape: how long each opcode's argument is and what the opcode does to the stack.
// ---------------------------------------------------------------------------------------------

namespace op {
constexpr uint8_t kMark = '(';
constexpr uint8_t kAppend = 'a';
constexpr uint8_t kAppends = 'e';
constexpr uint8_t kSetItem = 's';
constexpr uint8_t kSetItems = 'u';
constexpr uint8_t kLong1 = 0x8a;
constexpr uint8_t kLong4 = 0x8b;
constexpr uint8_t kBinPut = 'q';
constexpr uint8_t kLongBinPut = 'r';
constexpr uint8_t kMemoize = 0x94;
constexpr uint8_t kPut = 'p';
}  // namespace op

enum class ArgKind {
  kNone,
  kFixed,    // `size` raw bytes
  kCounted,  // a little-endian count of `size` bytes, then that many bytes
  kLines,    // `size` newline-terminated lines (protocol 0 text arguments, GLOBAL)
};

struct ArgSpec {
  ArgKind kind;
  size_t size;
};

enum class StackEffect {
  kNothing,       // PROTO, FRAME, memo puts
  kPush,          // pushes a value built by this op alone
  kMark,          // pushes a MARK
  kCombine,       // pops `count` entries, pushes one that starts where the first popped one did
  kPop,           // pops `count` entries (BUILD: the object below stays)
  kCollect,       // pops to the MARK, pushes one entry that starts at the MARK
  kExtendToMark,  // pops to the MARK; the container below stays
  kPopMark,       // POP_MARK: pops to the MARK
  kSingleInsert,  // APPEND (count 1) / SETITEM (count 2): the ops this file rewrites
  kStop,
};

struct OpcodeInfo {
  bool known;
  ArgSpec arg;
  StackEffect effect;
  size_t count;
};

constexpr OpcodeInfo kUnknownOpcode{false, {ArgKind::kNone, 0}, StackEffect::kNothing, 0};

OpcodeInfo op_info(ArgSpec arg, StackEffect effect, size_t count = 0) { return {true, arg, effect, count}; }

// Covers protocols 0-5 except DUP (it copies the entry below it, which an inserted MARK would
// hide) and INST/OBJ (protocol 0 class instances, which torch.save never writes).
OpcodeInfo describe_opcode(uint8_t opcode) {
  constexpr ArgSpec none{ArgKind::kNone, 0};
  auto fixed = [](size_t n) { return ArgSpec{ArgKind::kFixed, n}; };
  auto counted = [](size_t n) { return ArgSpec{ArgKind::kCounted, n}; };
  auto lines = [](size_t n) { return ArgSpec{ArgKind::kLines, n}; };
  using E = StackEffect;
  switch (opcode) {
    case 0x80:
      return op_info(fixed(1), E::kNothing);  // PROTO
    case 0x95:
      return op_info(fixed(8), E::kNothing);  // FRAME
    case 'q':
      return op_info(fixed(1), E::kNothing);  // BINPUT
    case 'r':
      return op_info(fixed(4), E::kNothing);  // LONG_BINPUT
    case 0x94:
      return op_info(none, E::kNothing);  // MEMOIZE
    case 'p':
      return op_info(lines(1), E::kNothing);  // PUT
    case '.':
      return op_info(none, E::kStop);  // STOP
    case '(':
      return op_info(none, E::kMark);  // MARK
    // Values built by a single op. BINGET pushes a fresh entry: the memo, not the stack,
    // supplies the value, so a MARK in front of it is harmless.
    case ']':
    case ')':
    case '}':
    case 0x8f:  // EMPTY_LIST/TUPLE/DICT/SET
    case 'N':
    case 0x88:
    case 0x89:  // NONE NEWTRUE NEWFALSE
      return op_info(none, E::kPush);
    case 'K':
      return op_info(fixed(1), E::kPush);  // BININT1
    case 'M':
      return op_info(fixed(2), E::kPush);  // BININT2
    case 'J':
      return op_info(fixed(4), E::kPush);  // BININT
    case 'G':
      return op_info(fixed(8), E::kPush);  // BINFLOAT
    case 'h':
      return op_info(fixed(1), E::kPush);  // BINGET
    case 'j':
      return op_info(fixed(4), E::kPush);  // LONG_BINGET
    case 0x82:
      return op_info(fixed(1), E::kPush);  // EXT1
    case 0x83:
      return op_info(fixed(2), E::kPush);  // EXT2
    case 0x84:
      return op_info(fixed(4), E::kPush);  // EXT4
    case 0x8a:
      return op_info(counted(1), E::kPush);  // LONG1
    case 0x8b:
      return op_info(counted(4), E::kPush);  // LONG4
    case 'U':
    case 'C':
    case 0x8c:  // SHORT_BINSTRING/BYTES/UNICODE
      return op_info(counted(1), E::kPush);
    case 'T':
    case 'B':
    case 'X':  // BINSTRING BINBYTES BINUNICODE
      return op_info(counted(4), E::kPush);
    case 0x8d:
    case 0x8e:
    case 0x96:  // BINUNICODE8 BINBYTES8 BYTEARRAY8
      return op_info(counted(8), E::kPush);
    case 'I':
    case 'L':
    case 'F':
    case 'S':
    case 'V':
    case 'g':
    case 'P':  // text forms, GET, PERSID
      return op_info(lines(1), E::kPush);
    case 'c':
      return op_info(lines(2), E::kPush);  // GLOBAL
    case 0x93:
      return op_info(none, E::kCombine, 2);  // STACK_GLOBAL
    case 0x85:
      return op_info(none, E::kCombine, 1);  // TUPLE1
    case 0x86:
      return op_info(none, E::kCombine, 2);  // TUPLE2
    case 0x87:
      return op_info(none, E::kCombine, 3);  // TUPLE3
    case 'Q':
      return op_info(none, E::kCombine, 1);  // BINPERSID
    case 'R':
      return op_info(none, E::kCombine, 2);  // REDUCE
    case 0x81:
      return op_info(none, E::kCombine, 2);  // NEWOBJ
    case 0x92:
      return op_info(none, E::kCombine, 3);  // NEWOBJ_EX
    case 'b':
      return op_info(none, E::kPop, 1);  // BUILD
    case '0':
      return op_info(none, E::kPop, 1);  // POP
    case 't':
    case 'l':
    case 'd':
    case 0x91:  // TUPLE LIST DICT FROZENSET
      return op_info(none, E::kCollect);
    case 'e':
    case 'u':
    case 0x90:  // APPENDS SETITEMS ADDITEMS
      return op_info(none, E::kExtendToMark);
    case '1':
      return op_info(none, E::kPopMark);  // POP_MARK
    case 'a':
      return op_info(none, E::kSingleInsert, 1);  // APPEND
    case 's':
      return op_info(none, E::kSingleInsert, 2);  // SETITEM
    default:
      return kUnknownOpcode;
  }
}

std::string hex_byte(uint8_t byte) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", byte);
  return text;
}

// ---------------------------------------------------------------------------------------------
// The rewrite. Walks the stream once, tracking for every stack entry the offset of the first op
// that went into building it. That offset is where a MARK has to go so that the entry (and
// only it) sits above the MARK when the batched opcode runs. Ints are widened on the way.
// ---------------------------------------------------------------------------------------------

struct StackEntry {
  size_t start;  // offset of the first byte of the ops that built this entry
  bool is_mark;
};

class PickleRewriter {
 public:
  explicit PickleRewriter(const std::string& pickle) : pickle_(pickle) {}

  std::string rewrite() {
    size_t offset = 0;
    bool stopped = false;
    while (!stopped) {
      if (offset >= pickle_.size()) {
        fail("pickle ends without a STOP opcode", offset);
      }
      const auto opcode = static_cast<uint8_t>(pickle_[offset]);
      const OpcodeInfo info = describe_opcode(opcode);
      if (!info.known) {
        fail("unknown pickle opcode " + hex_byte(opcode), offset);
      }
      apply(info, opcode, offset);
      stopped = info.effect == StackEffect::kStop;
      const size_t next = skip_argument(info.arg, offset + 1);  // checks the argument is all there
      if (opcode == op::kBinPut || opcode == op::kLongBinPut || opcode == op::kPut || opcode == op::kMemoize)
        note_memo_put(opcode, offset);
      if (opcode == op::kLong1 || opcode == op::kLong4) widen_long(opcode, offset, next);
      offset = next;
    }
    return with_rewrites();
  }

 private:
  [[noreturn]] static void fail(const std::string& problem, size_t offset) {
    throw std::runtime_error(problem + " at byte " + std::to_string(offset));
  }

  // Returns the offset just past the argument that starts at `offset`.
  size_t skip_argument(const ArgSpec& arg, size_t offset) const {
    switch (arg.kind) {
      case ArgKind::kNone:
        return offset;
      case ArgKind::kFixed:
        return checked_end(offset, arg.size);
      case ArgKind::kCounted: {
        const size_t data_start = checked_end(offset, arg.size);
        return checked_end(data_start, read_little_endian(offset, arg.size));
      }
      case ArgKind::kLines:
        for (size_t line = 0; line < arg.size; ++line) {
          const size_t newline = pickle_.find('\n', offset);
          if (newline == std::string::npos) fail("pickle truncated in a text argument", offset);
          offset = newline + 1;
        }
        return offset;
    }
    return offset;
  }

  size_t checked_end(size_t offset, size_t length) const {
    if (length > pickle_.size() - offset) fail("pickle truncated in an opcode argument", offset);
    return offset + length;
  }

  uint64_t read_little_endian(size_t offset, size_t width) const {
    uint64_t value = 0;
    for (size_t i = width; i-- > 0;) {
      value = (value << 8) | static_cast<uint8_t>(pickle_[offset + i]);
    }
    return value;
  }

  void apply(const OpcodeInfo& info, uint8_t opcode, size_t offset) {
    switch (info.effect) {
      case StackEffect::kNothing:
      case StackEffect::kStop:
        break;
      case StackEffect::kPush:
        stack_.push_back({offset, false});
        break;
      case StackEffect::kMark:
        stack_.push_back({offset, true});
        break;
      case StackEffect::kCombine:
        stack_.push_back({pop_values(info.count, opcode, offset), false});
        break;
      case StackEffect::kPop:
        pop_values(info.count, opcode, offset);
        break;
      case StackEffect::kCollect:
        stack_.push_back({pop_to_mark(opcode, offset), false});
        break;
      case StackEffect::kExtendToMark:
        pop_to_mark(opcode, offset);
        require_container(opcode, offset);
        break;
      case StackEffect::kPopMark:
        pop_to_mark(opcode, offset);
        break;
      case StackEffect::kSingleInsert:
        mark_insertions_.push_back(pop_values(info.count, opcode, offset));
        require_container(opcode, offset);
        batched_opcodes_.push_back(offset);
        break;
    }
  }

  // Pops `count` non-MARK entries; returns the start of the deepest one popped.
  size_t pop_values(size_t count, uint8_t opcode, size_t offset) {
    if (stack_.size() < count) fail("stack underflow at opcode " + hex_byte(opcode), offset);
    const size_t first = stack_.size() - count;
    for (size_t i = first; i < stack_.size(); ++i) {
      if (stack_[i].is_mark) fail("unexpected MARK below opcode " + hex_byte(opcode), offset);
    }
    const size_t start = stack_[first].start;
    stack_.resize(first);
    return start;
  }

  // libtorch's unpickler grows its memo table to whatever index a PUT names (LONG_BINPUT
  // 1667460865 asked for 26 GB: found by fuzz/torch_save_fuzzer). A pickler numbers its memo
  // entries 0, 1, 2...: an index past the entries put so far is refused. (BINPUT's one-byte
  // index cannot ask for much.)
  void note_memo_put(uint8_t opcode, size_t offset) {
    uint64_t index = 0;
    if (opcode == op::kBinPut || opcode == op::kMemoize) {
      ++puts_;
      return;
    }
    if (opcode == op::kLongBinPut) {
      index = read_little_endian(offset + 1, 4);
    } else {
      const size_t end = pickle_.find('\n', offset + 1);
      const std::string digits = pickle_.substr(offset + 1, end - offset - 1);
      if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos)
        fail("a PUT whose memo index is not a number", offset);
      index = std::stoull(digits);
    }
    if (index > puts_)
      fail(
          "memo index " + std::to_string(index) + " out of order (" + std::to_string(puts_) + " entries put before it)",
          offset);
    ++puts_;
  }

  // APPEND(S)/SETITEM(S) add to the entry left on top; without one the stream is malformed.
  void require_container(uint8_t opcode, size_t offset) const {
    if (stack_.empty() || stack_.back().is_mark) {
      fail("no container for opcode " + hex_byte(opcode), offset);
    }
  }

  // Pops everything down to and including the topmost MARK; returns the MARK's offset.
  size_t pop_to_mark(uint8_t opcode, size_t offset) {
    for (size_t i = stack_.size(); i-- > 0;) {
      if (stack_[i].is_mark) {
        const size_t mark_offset = stack_[i].start;
        stack_.resize(i);
        return mark_offset;
      }
    }
    fail("no MARK for opcode " + hex_byte(opcode), offset);
  }

  // Python pickles an int outside 32 bits as LONG1 with as few bytes as hold it (5 for 2**32),
  // or LONG4 beyond 255 bytes; libtorch's unpickler takes LONG1 with exactly 8. The op becomes
  // that, sign-extended; an int that does not fit 64 bits is refused, as TorchScript has none.
  void widen_long(uint8_t opcode, size_t offset, size_t end) {
    const size_t count_width = opcode == op::kLong1 ? 1 : 4;
    const size_t data = offset + 1 + count_width;
    const size_t width = end - data;
    if (opcode == op::kLong1 && width == 8) return;
    const bool negative = width > 0 && (static_cast<uint8_t>(pickle_[end - 1]) & 0x80) != 0;
    const char extension = negative ? '\xff' : '\0';
    bool fits = width <= 8 || ((static_cast<uint8_t>(pickle_[data + 7]) & 0x80) != 0) == negative;
    for (size_t i = 8; i < width; ++i) fits = fits && pickle_[data + i] == extension;
    if (!fits) fail("an int wider than 64 bits (TorchScript's int has 64)", offset);
    std::string widened = {static_cast<char>(op::kLong1), '\x08'};
    for (size_t i = 0; i < 8; ++i) widened.push_back(i < width ? pickle_[data + i] : extension);
    edits_.push_back({offset, end - offset, widened});
  }

  std::string with_rewrites() const {
    std::vector<Edit> edits = edits_;
    for (size_t offset : batched_opcodes_) {
      const bool is_append = static_cast<uint8_t>(pickle_[offset]) == op::kAppend;
      edits.push_back({offset, 1, std::string(1, static_cast<char>(is_append ? op::kAppends : op::kSetItems))});
    }
    for (size_t offset : mark_insertions_) edits.push_back({offset, 0, std::string(1, static_cast<char>(op::kMark))});
    // At one offset, inserted MARKs go before the op that is replaced there.
    std::sort(edits.begin(), edits.end(),
              [](const Edit& a, const Edit& b) { return std::tie(a.offset, a.erase) < std::tie(b.offset, b.erase); });

    std::string out;
    out.reserve(pickle_.size() + edits.size() * 8);
    size_t copied = 0;
    for (const Edit& edit : edits) {
      out.append(pickle_, copied, edit.offset - copied);
      out += edit.insert;
      copied = edit.offset + edit.erase;
    }
    out.append(pickle_, copied, std::string::npos);
    return out;
  }

  // Replace `erase` bytes at `offset` with `insert`.
  struct Edit {
    size_t offset;
    size_t erase;
    std::string insert;
  };

  const std::string& pickle_;
  std::vector<StackEntry> stack_;
  std::vector<size_t> mark_insertions_;
  std::vector<size_t> batched_opcodes_;
  std::vector<Edit> edits_;
  uint64_t puts_ = 0;  // memo entries put so far, by any of the PUT opcodes
};

// ---------------------------------------------------------------------------------------------
// Reading the archive.
// ---------------------------------------------------------------------------------------------

void require_regular_file(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored)) throw UserError(path + ": no such file");
  if (std::filesystem::is_directory(path, ignored)) throw UserError(path + ": is a directory");
}

// torch.save has written zip archives since 1.6; older files (and anything else) are a raw
// pickle stream that libtorch cannot read at all, so say what to do instead of a zip error.
void require_zip_archive(const std::string& path) {
  static constexpr char kZipMagic[] = {'P', 'K', '\x03', '\x04'};
  char head[sizeof kZipMagic] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open");
  in.read(head, sizeof head);
  if (in.gcount() != sizeof head || std::memcmp(head, kZipMagic, sizeof head) != 0) {
    throw UserError(path +
                    ": not a torch.save zip archive (legacy or foreign format); re-save it with a "
                    "current torch.save");
  }
}

std::string read_record(caffe2::serialize::PyTorchStreamReader& archive, const std::string& name) {
  at::DataPtr data;
  size_t size = 0;
  std::tie(data, size) = archive.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// The whole file mapped copy-on-write: tensors read from it use the page cache's pages, which
// every process that maps the same file shares (the minify's CLI and its workers hold a real
// model's parameters once between them, not once each), and a write to such a tensor copies
// only the page it touches. tsrepro never changes an inputs.pt in place.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat info {};
    if (::fstat(fd, &info) == 0 && info.st_size > 0) {
      size_ = static_cast<size_t>(info.st_size);
      void* address = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
      base_ = address == MAP_FAILED ? nullptr : static_cast<char*>(address);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (base_) ::munmap(base_, size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  char* base() const { return base_; }
  size_t size() const { return size_; }

 private:
  char* base_ = nullptr;
  size_t size_ = 0;
};

// A storage's bytes where they lie in the mapping (the storage keeps the mapping alive), when
// the record is stored as it is and aligned as PyTorchStreamWriter aligns it; else nullopt.
std::optional<at::DataPtr> mapped_record(caffe2::serialize::PyTorchStreamReader& archive,
                                         const std::shared_ptr<MappedFile>& file, const std::string& name) {
  if (!file || !file->base()) return std::nullopt;
  size_t offset = 0;
  try {
    offset = archive.getRecordOffset(name);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  constexpr size_t kAlignment = 64;  // caffe2::serialize's kFieldAlignment
  if (offset >= file->size() || offset % kAlignment != 0) return std::nullopt;
  auto* keep_alive = new std::shared_ptr<MappedFile>(file);
  return at::DataPtr(
      file->base() + offset, keep_alive,
      [](void* context) { delete static_cast<std::shared_ptr<MappedFile>*>(context); }, at::Device(at::kCPU));
}

// torch.save stores records uncompressed, so none is larger than the file. libtorch allocates
// what the zip directory claims before it reads: a 1 KB file claiming 26 GB asked for 26 GB
// (found by fuzz/torch_save_fuzzer).
void require_record_within_file(const std::string& name, uint64_t size, uint64_t file_size) {
  if (size > file_size)
    throw std::runtime_error("the record " + name + " claims " + std::to_string(size) + " bytes in a file of " +
                             std::to_string(file_size));
}

// Mirrors torch::jit::readArchiveAndTensors("data", ...): storages live in "data/<key>". Each
// storage's bytes are noted with the size of the record they came from: the pickle declares a
// storage's size, and a record shorter than that would be read past its end.
c10::IValue unpickle_archive(caffe2::serialize::PyTorchStreamReader& archive, const std::string& pickle,
                             const std::shared_ptr<MappedFile>& mapped,
                             const std::map<std::string, uint64_t>& record_sizes,
                             std::unordered_map<const void*, std::pair<std::string, uint64_t>>& storage_records) {
  size_t bytes_read = 0;
  auto read_pickle = [&](char* buffer, size_t wanted) -> size_t {
    const size_t n = std::min(wanted, pickle.size() - bytes_read);
    std::memcpy(buffer, pickle.data() + bytes_read, n);
    bytes_read += n;
    return n;
  };
  auto read_storage = [&](const std::string& key) {
    const std::string name = "data/" + key;
    const auto size = record_sizes.find(name);
    if (size == record_sizes.end()) throw std::runtime_error("no record " + name + " for a storage");
    // torch.save stores tensor data uncompressed, so the record's bytes are the storage's bytes.
    std::optional<at::DataPtr> in_place = mapped_record(archive, mapped, name);
    at::DataPtr data = in_place ? std::move(*in_place) : std::get<0>(archive.getRecord(name));
    storage_records[data.get()] = {name, size->second};
    return data;
  };
  torch::jit::Unpickler unpickler(read_pickle, /*type_resolver=*/nullptr,
                                  /*obj_loader=*/nullptr, read_storage,
                                  /*device=*/c10::nullopt);
  // Decides how container type tags are restored (see [type tag serialization] in libtorch).
  unpickler.set_version(archive.version());
  return unpickler.parse_ivalue();
}

// c10::Error::what() carries a C++ backtrace; users only need the message itself.
std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) {
    return one_line_error(c10_error->what_without_backtrace());
  }
  return one_line_error(error.what());
}

}  // namespace

std::string rewrite_for_libtorch(const std::string& pickle) { return PickleRewriter(pickle).rewrite(); }

c10::IValue read_torch_save(const std::string& path) {
  require_regular_file(path);
  require_zip_archive(path);
  c10::IValue value;
  std::unordered_map<const void*, std::pair<std::string, uint64_t>> storage_records;
  try {
    const std::map<std::string, uint64_t> record_sizes = zip_record_sizes(path);
    const auto mapped = std::make_shared<MappedFile>(path);
    for (const auto& [name, size] : record_sizes) require_record_within_file(name, size, mapped->size());
    caffe2::serialize::PyTorchStreamReader archive(path);
    value = unpickle_archive(archive, rewrite_for_libtorch(read_record(archive, "data.pkl")), mapped, record_sizes,
                             storage_records);
  } catch (const std::exception& error) {
    throw UserError(path + ": cannot read torch.save data: " + message_of(error));
  }
  check_sound_value_or_leak(value, path, [&](const c10::Storage& storage) {
    const auto record = storage_records.find(storage.data_ptr().get());
    if (record != storage_records.end() && storage.nbytes() > record->second.second)
      throw UserError(path + ": a storage of " + std::to_string(storage.nbytes()) + " bytes over the record " +
                      record->second.first + " of " + std::to_string(record->second.second) +
                      " bytes (a truncated file?)");
  });
  return value;
}

}  // namespace tsrepro

#pragma once
// Reads what Python's torch.save writes (the zip format) into an IValue, including the forms
// that libtorch's own torch::pickle_load refuses: a one-element list (pickle op APPEND), a
// one-element dict (SETITEM) and an int Python wrote in fewer or more than 8 bytes (LONG1 of 5
// bytes for 2**32, LONG4). Those are rewritten to the forms libtorch's Unpickler reads (MARK ...
// APPENDS / SETITEMS, LONG1 of 8 bytes) before it sees the stream.

#include <string>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// Throws tsrepro::UserError("PATH: <problem>") for a missing file, a legacy (pre-1.6, non-zip)
// file, or a file that is not a torch.save archive.
c10::IValue read_torch_save(const std::string& path);

// The pickle rewrite on its own (exposed for tests): returns `pickle` with every APPEND turned
// into MARK <item> APPENDS, every SETITEM into MARK <key> <value> SETITEMS and every LONG1/LONG4
// into LONG1 of 8 bytes (throws std::runtime_error for an int that needs more than 64 bits).
std::string rewrite_for_libtorch(const std::string& pickle);

}  // namespace tsrepro

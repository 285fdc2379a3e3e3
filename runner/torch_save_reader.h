#pragma once
// Reads what Python's torch.save writes (the zip format) into an IValue, including the forms
// that libtorch's own torch::pickle_load refuses: a one-element list (pickle op APPEND) and a
// one-element dict (SETITEM). Those are rewritten to their batched forms (MARK ... APPENDS /
// SETITEMS) before libtorch's Unpickler sees the stream.

#include <string>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// Throws tsrepro::UserError("PATH: <problem>") for a missing file, a legacy (pre-1.6, non-zip)
// file, or a file that is not a torch.save archive.
c10::IValue read_torch_save(const std::string& path);

// The pickle rewrite on its own (exposed for tests): returns `pickle` with every APPEND turned
// into MARK <item> APPENDS and every SETITEM into MARK <key> <value> SETITEMS.
std::string batch_single_appends(const std::string& pickle);

}  // namespace tsrepro

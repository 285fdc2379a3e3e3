#pragma once
// Writes what torch.save writes (the zip format, a value pickled with its tensors as records),
// byte for byte what torch::jit::pickle_save returns, but streamed into the file: pickle_save
// builds the whole archive in memory first, and for a model's parameters that doubled the
// process's peak (the archive, then a copy of it) every time a case or a value was written.

#include <string>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// Throws tsrepro::UserError("PATH: cannot write") when the file cannot be written.
void write_torch_save(const std::string& path, const c10::IValue& value);

}  // namespace tsrepro

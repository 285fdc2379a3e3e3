#include "runner/formats/torch_save_writer.h"

#include <fstream>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "tsrepro/error.h"

namespace tsrepro {

void write_torch_save(const std::string& path, const c10::IValue& value) {
  // As torch::jit::pickle_save (torch/csrc/jit/serialization/pickle.cpp): the pickle program in
  // memory (it names the tensors, it does not hold their data), the tensors' storages written
  // from where they are.
  std::vector<char> pickle_data;
  torch::jit::Pickler pickler(
      [&](const char* bytes, size_t size) { pickle_data.insert(pickle_data.end(), bytes, bytes + size); });
  pickler.protocol();
  pickler.pushIValue(value);
  pickler.stop();

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw UserError(path + ": cannot write");
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* bytes, size_t size) {
      out.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(size));
      return out ? size : size_t{0};
    });
    torch::jit::writeArchiveAndTensors("data", pickle_data.data(), pickle_data.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
  }
  out.close();
  if (!out) throw UserError(path + ": cannot write");
}

}  // namespace tsrepro

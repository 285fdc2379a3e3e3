#pragma once
// What the PyTorch 2 backends share (export, inductor, aoti: backends/<id>/backend.cpp): the case
// made a module (backends/case_module.h), handed to a Python compile server
// (backends/pt2_compile_server.py) that converts it with PyTorch's TorchScript converter into
// torch.export's program and compiles that as the backend says. One server per worker process,
// started on the first request, started again when it died, killed with the worker; compiled
// programs stay in it under a key made of the candidate's graph, values, backend and options.
//
// Only a libtorch 2.x build has these backends (its Python's torch must be the same line: Debian
// 13's python3-torch 2.6 beside libtorch-dev 2.6); on 1.13 their factories refuse with one line.

#include <memory>
#include <string>
#include <vector>

#include "tsrepro/backend.h"

namespace tsrepro {

// Throws UserError saying what `--backend BACKEND` needs, where this build is not libtorch 2.x.
void require_pytorch2(const std::string& backend);

// A case compiled by the server.
struct Pt2Compilation {
  std::string key;      // the server's name for it
  std::string package;  // aoti: the .pt2 file aoti_compile_and_package wrote
  bool packed = false;  // the module returns the graph's several outputs as one tuple
  std::vector<bool> lifted;  // which of run()'s inputs the module holds (none for a saved model)
};

// Compiles the case for `backend` ("export", "inductor", "aoti") with `options` (already
// checked): throws ForeignError (the Python exception) for a compile failure.
Pt2Compilation compile_in_python(const std::string& backend, const BackendOptions& options, const BackendInput& input,
                                 const std::vector<c10::IValue>& sample);
// The same for a saved model itself (`import --verify`), given forward's arguments.
Pt2Compilation compile_in_python(const std::string& backend, const BackendOptions& options,
                                 const torch::jit::Module& module, const std::vector<c10::IValue>& forward_sample);

// A compilation the server itself runs (export, inductor): run() sends it the forward inputs.
std::unique_ptr<PreparedGraph> run_in_python(Pt2Compilation compilation);

// A module's return value as the graph's outputs: a tuple's elements where it packed several.
std::vector<c10::IValue> graph_outputs(const c10::IValue& returned, bool packed);

}  // namespace tsrepro

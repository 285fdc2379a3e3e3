#pragma once
// Constructors of the built-in backends, for the registry (runner/backends/registry.cpp).

#include <memory>
#include <string>

#include "tsrepro/backend.h"

namespace tsrepro {

// The interpreter with no passes: what `eager` runs, and what inject faults run on.
std::unique_ptr<PreparedGraph> interpret_graph(std::shared_ptr<torch::jit::Graph> graph);

std::unique_ptr<Backend> make_eager_backend(const std::string& spec, const BackendOptions& options);
std::unique_ptr<Backend> make_jit_backend(const std::string& spec, const BackendOptions& options);
std::unique_ptr<Backend> make_nnc_backend(const std::string& spec, const BackendOptions& options);
std::unique_ptr<Backend> make_ofi_backend(const std::string& spec, const BackendOptions& options);
std::unique_ptr<Backend> make_inject_backend(const std::string& spec, const BackendOptions& options);

}  // namespace tsrepro

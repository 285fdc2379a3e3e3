#pragma once
// `with torch.jit.strict_fusion():` in a case.
//
// In the model the block is prim::Enter and prim::Exit on an object of the TorchScript class
// __torch__.torch.jit.strict_fusion; the profiling executor's CheckStrictFusion finds the block by
// that class name once its fusers have run and raises "Found unfused operators" for what is left
// unfused inside it. IR text cannot name a class, so a case writes the object as a string
// constant that names the context manager (the form graph.ir holds, docs/FORMATS.md):
//
//   %sf : str = prim::Constant[value="torch.jit.strict_fusion"]()
//   %e : NoneType = prim::Enter(%sf)
//   ...
//   %x : NoneType = prim::Exit(%sf)
//
// Import writes that form (mark_strict_fusion_blocks); every run puts the object back first
// (recreate_strict_fusion_objects), so that the interpreter enters and exits it and the executor
// checks the block as it checks the model's. repro.cpp does the same with this very file
// (embedded as tsrepro_strict_fusion.h), and repro.py writes the block as Python's `with`.
//
// This file uses libtorch and runner/graph/nested_nodes.h only: repro.cpp's tsrepro_strict_fusion.h
// is the three of them as they are.

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

// The value the case's string constant holds, and the Python expression of the context manager.
inline constexpr const char* kStrictFusionMarker = "torch.jit.strict_fusion";

// The class stock's CheckStrictFusion looks for, with the methods the interpreter and the
// frontend call (__init__, __enter__, __exit__: all do nothing, as torch.jit.strict_fusion's).
c10::ClassTypePtr strict_fusion_class();

// Whether `value` is a case's marker constant (above).
bool is_strict_fusion_marker(const torch::jit::Value* value);

// Whether the graph holds a strict_fusion block in the case's form (a marker an Enter reads).
bool has_strict_fusion_blocks(const torch::jit::Graph& graph);

// Import: each strict_fusion object that prim::Enter and prim::Exit use becomes the marker, Enter's
// and Exit's outputs NoneType; its creation goes where nothing else reads the object (an
// __init__ call left for import's inlining keeps it). Returns how many blocks it marked.
size_t mark_strict_fusion_blocks(torch::jit::Graph& graph);

// Every run: each marker an Enter or Exit reads becomes a fresh object of strict_fusion_class(),
// created where the marker was. A graph without markers is left as it is.
void recreate_strict_fusion_objects(torch::jit::Graph& graph);

// A graph's edits (the minifier's cuts) may keep an Enter without its Exit or the other way; the
// interpreter's EXIT then reads past its entered objects. Drops every Enter and Exit that has no
// partner in its block, in order. Returns whether it dropped any.
bool drop_unpaired_block_ends(torch::jit::Graph& graph);

}  // namespace tsrepro

#pragma once
// The canonical form of a (minified) graph, by which a sweep merges failures into one bug: the
// nodes in order, each as its kind, its inputs by position and its outputs' kinds of type. Value
// names, source comments, tensor shapes and constants' values are left out: two models that fail
// on the same op pair minify to graphs that differ in exactly those.

#include <string>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

std::string canonical_form(const torch::jit::Graph& graph);

}  // namespace tsrepro

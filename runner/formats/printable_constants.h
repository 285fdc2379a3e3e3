#pragma once
// Constants libtorch prints but cannot parse back. graph_to_ir writes IR text that
// torch::jit::parseIR (and Python's torch._C.parse_ir, in repro.py) must read back to a graph
// that runs the same way, but libtorch's printer writes some constant values in forms its own
// parser refuses or misreads (checked on 1.13.1 and 2.6.0):
//
//   float inf / -inf / nan   "inf" parses as a name the interpreter cannot run; "-inf" not at all
//   float subnormals          the parser's strtod reports them out of range
//   complex                   "1.+2.j" does not parse
//   tuples, dicts             no literal syntax in the parser
//   empty lists, bool lists   "[]" parses untyped; "[True]" does not parse
//   lists holding any of the above
//   str with bytes >= 0x80    printed as broken octal escapes (signed chars)
//   str with a CR             printed "\r", an escape the parser does not know
//
// make_constants_printable rewrites every such prim::Constant into nodes that build the same
// value from constants the parser reads: aten::Float("inf"), aten::mul(x * 2^600, 2^-600) for a
// subnormal x (both factors normal, the product exact), aten::Complex(re, im), prim::ListConstruct,
// prim::TupleConstruct and prim::DictConstruct. A node that builds a list builds a fresh one on
// each run where the constant was shared; TorchScript makes list constants only of lists nothing
// mutates, so no program can tell. Strings get their exact bytes back in the printed text
// (printable_string_literals). So do string attributes (s, ss) of other nodes: libtorch prints
// them the same broken way (an op named in the IR with a str attribute; fuzz/ir_text_fuzzer).

#include <map>
#include <string>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Whether any constant of the graph (nested blocks included) needs make_constants_printable.
bool has_unprintable_constants(const torch::jit::Graph& graph);

// The string constants whose bytes libtorch prints wrongly, replaced by placeholders: the map
// from each placeholder's printed literal ("\"tsrepro_string_3\"") to the literal that parseIR
// reads back as the original bytes (octal escapes). Apply it to the printed text.
using StringLiteralFixes = std::map<std::string, std::string>;

// Rewrites the unprintable constants in place (see above); returns the string fixes.
StringLiteralFixes make_constants_printable(torch::jit::Graph& graph);

}  // namespace tsrepro

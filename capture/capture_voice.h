#pragma once
// What both halves of the capture share, torch-free: the variable that marks the checks' own
// processes, and the capture's one line on stderr.

#include <cstdio>
#include <string>

namespace tsrepro::capture {

// Set in the environment of the tsrepro processes the capture starts: they must not capture
// themselves (their preload is stripped too; this covers a program that sets it again).
constexpr const char* kChildVariable = "TSREPRO_CAPTURE_CHILD";

// One line on stderr: the capture's own voice, whatever the program logs. stdio, not iostreams:
// the preloaded half says its line from a constructor, before any iostream may be set up.
inline void say(const std::string& line) { std::fprintf(stderr, "[tsrepro capture] %s\n", line.c_str()); }

}  // namespace tsrepro::capture

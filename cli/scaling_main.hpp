#pragma once
// The whole `scaling` command as a function (main.cpp), so that cli/entry.cpp's main and the fuzz target
// fuzz/cli_fuzz.cpp run exactly the same code. Returns the exit code: 0 done, 1 invalid value, 2 usage.
int scaling_main(int argc, char** argv);

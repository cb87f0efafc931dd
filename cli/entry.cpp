// The `scaling` executable: everything is in scaling_main (main.cpp), which the CLI fuzz target calls too.
#include "scaling_main.hpp"

int main(int argc, char** argv) { return scaling_main(argc, argv); }

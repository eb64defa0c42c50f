// Hello world with the C++ wrapper <mcbsp.hpp> (Algorithm 3 of the
// MulticoreBSP for C paper): one BSP_program instance per process.
// Usage: hello_bsp_cpp [P]
#include <mcbsp.hpp>

#include <cstdlib>
#include <iostream>
#include <sstream>

class Hello_World : public mcbsp::BSP_program {
protected:
    // the SPMD section each BSP process executes on its own instance
    void spmd() override
    {
        std::ostringstream line;
        line << "Hello world from process " << bsp_pid() << " of " << bsp_nprocs() << "!\n";
        std::cout << line.str() << std::flush;
    }

    // used to make the instances of processes 1 .. P-1
    BSP_program *newInstance() override { return new Hello_World(); }

public:
    Hello_World() {}
};

int main(int argc, char **argv)
{
    Hello_World p;     // the instance of process 0
    if (argc > 1) p.begin(static_cast<bsp_pid_t>(std::atoi(argv[1])));
    else p.begin();    // bsp_nprocs() processes
    return 0;          // all sibling processes have ended
}

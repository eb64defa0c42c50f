// Shared by the test suites (core, BSPlib): run a program as a subprocess
// (optionally through a launcher named by SUPERSTEP_TEST_LAUNCHER, e.g.
// "bsprun --engine mpi -n {P}", for distributed engines),
// feed it stdin, capture stdout and stderr, and kill its process group
// after a timeout: a hang fails the test instead of stalling it.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

extern char **environ;

namespace sstest {

struct Child {
    bool started = false;
    bool timed_out = false;
    bool exited = false;     // ended by exit/_exit (not by a signal)
    int code = -1;           // exit status when exited
    int signal = 0;          // terminating signal otherwise
    std::string out, err;
};

inline std::vector<std::string> split_words(const std::string &s)
{
    std::istringstream in(s);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
}

// The launcher prefix: SUPERSTEP_TEST_LAUNCHER, where "{P}" stands for the
// number of processes of the run (e.g. "bsprun --engine mpi -n {P}").
inline std::vector<std::string> launcher(unsigned procs)
{
    std::vector<std::string> w;
    if (const char *l = std::getenv("SUPERSTEP_TEST_LAUNCHER")) {
        for (std::string x : split_words(l)) {
            for (size_t at; (at = x.find("{P}")) != std::string::npos;)
                x.replace(at, 3, std::to_string(procs ? procs : 1));
            w.push_back(x);
        }
    }
    return w;
}

// does the launcher start a distributed engine (separate address spaces)?
inline bool distributed_launcher()
{
    const char *l = std::getenv("SUPERSTEP_TEST_LAUNCHER");
    return l && (std::string(l).find("mpi") != std::string::npos
            || std::string(l).find("hybrid") != std::string::npos);
}

// env: extra "NAME=value" entries for the child; procs: processes of the
// run (for the launcher)
inline Child run_child(std::vector<std::string> argv, const std::string &input = "",
        int timeout_s = 30, const std::vector<std::string> &env = {}, unsigned procs = 1)
{
    Child r;
    {
        std::vector<std::string> full = launcher(procs);
        full.insert(full.end(), argv.begin(), argv.end());
        argv = std::move(full);
    }
    int inp[2], outp[2], errp[2];
    if (pipe2(inp, O_CLOEXEC) || pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC)) return r;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
    posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&at, 0);
    // the child's environment: ours, with the entries of `env` replacing
    // those of the same name
    std::vector<std::string> envs;
    for (char **e = environ; *e; ++e) {
        const std::string cur(*e);
        bool replaced = false;
        for (const auto &x : env)
            if (cur.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0) replaced = true;
        if (!replaced) envs.push_back(cur);
    }
    for (const auto &e : env) envs.push_back(e);
    std::vector<char *> cenv, cargv;
    for (auto &e : envs) cenv.push_back(const_cast<char *>(e.c_str()));
    cenv.push_back(nullptr);
    for (auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, cargv[0], &fa, &at, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(inp[0]);
    close(outp[1]);
    close(errp[1]);
    if (rc != 0) {
        close(inp[1]);
        close(outp[0]);
        close(errp[0]);
        r.err = "posix_spawn failed";
        return r;
    }
    r.started = true;
    // the input is small: write it all and close (a child that does not read
    // it gets SIGPIPE-free EOF handling since we ignore EPIPE)
    signal(SIGPIPE, SIG_IGN);
    if (!input.empty()) {
        ssize_t left = static_cast<ssize_t>(input.size());
        const char *p = input.data();
        while (left > 0) {
            ssize_t w = write(inp[1], p, static_cast<size_t>(left));
            if (w <= 0) break;
            p += w;
            left -= w;
        }
    }
    close(inp[1]);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    struct pollfd fds[2] = { { outp[0], POLLIN, 0 }, { errp[0], POLLIN, 0 } };
    std::string *sinks[2] = { &r.out, &r.err };
    int open_fds = 2;
    while (open_fds > 0) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            r.timed_out = true;
            kill(-pid, SIGKILL);
            break;
        }
        int n = poll(fds, 2, static_cast<int>(left));
        if (n < 0) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            char buf[4096];
            ssize_t got = read(fds[i].fd, buf, sizeof buf);
            if (got > 0) {
                sinks[i]->append(buf, static_cast<size_t>(got));
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0) close(f.fd);
    int status = 0;
    if (r.timed_out) {
        waitpid(pid, &status, 0);
        return r;
    }
    // the pipes are closed; the process ends soon (or is a hang: bounded wait)
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (std::chrono::steady_clock::now() > deadline) {
            r.timed_out = true;
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            return r;
        }
        usleep(2000);
    }
    if (WIFEXITED(status)) {
        r.exited = true;
        r.code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        r.signal = WTERMSIG(status);
    }
    return r;
}

// number of lines of s that contain `needle`
inline int count_lines_with(const std::string &s, const std::string &needle)
{
    std::istringstream in(s);
    int n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.find(needle) != std::string::npos) n++;
    return n;
}

} // namespace sstest

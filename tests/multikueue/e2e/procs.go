package main

// The processes of the test clusters: each is started with its output in a log file, can be
// stopped (SIGTERM, then SIGKILL), killed (SIGKILL, a crash) and started again with the same
// command line. Every process is in its own process group and is killed when the test ends.
// A process with a niceness runs under nice(1): its CPU yields to the others'.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

type proc struct {
	name string
	args []string
	env  []string
	log  string
	nice int // nice(1)'s adjustment; 0: none

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	starts int
}

type procs struct {
	dir  string
	mu   sync.Mutex
	list []*proc
}

func (ps *procs) add(name string, env []string, args ...string) *proc {
	p := &proc{name: name, args: args, env: env, log: filepath.Join(ps.dir, name+".log")}
	ps.mu.Lock()
	ps.list = append(ps.list, p)
	ps.mu.Unlock()
	return p
}

// start runs the process (again); its output is appended to its log.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s is already running", p.name)
	}
	out, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.starts++
	fmt.Fprintf(out, "\n==== start %d at %s: %v\n", p.starts, time.Now().Format(time.RFC3339Nano), p.args)
	args := p.args
	if p.nice != 0 {
		args = append([]string{"nice", "-n", strconv.Itoa(p.nice)}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting %s: %w", p.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// running says whether the process has been started and has not exited.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// signal sends sig to the process group and waits up to `wait` for the exit; SIGKILL after.
func (p *proc) signal(sig syscall.Signal, wait time.Duration) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case <-done:
		return
	case <-time.After(wait):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// kill is a crash: SIGKILL, no chance to clean up.
func (p *proc) kill() { p.signal(syscall.SIGKILL, 5*time.Second) }

// stop asks the process to exit (SIGTERM), then kills it.
func (p *proc) stop() { p.signal(syscall.SIGTERM, 15*time.Second) }

// killAll kills every process at once (the end of the test: nothing needs a clean stop).
func (ps *procs) killAll() {
	ps.mu.Lock()
	list := append([]*proc(nil), ps.list...)
	ps.mu.Unlock()
	for _, p := range list {
		p.kill()
	}
}

// exited lists the processes that were started and have exited on their own.
func (ps *procs) exited() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var names []string
	for _, p := range ps.list {
		p.mu.Lock()
		if p.cmd != nil {
			select {
			case <-p.done:
				names = append(names, p.name)
			default:
			}
		}
		p.mu.Unlock()
	}
	return names
}

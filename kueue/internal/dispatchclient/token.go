package dispatchclient

// The bearer token from a file (a mounted Kubernetes Secret, typically), re-read when the file
// changes so that the token rotates without a restart: the file is looked at (stat) at most
// once per Recheck, and re-read when its size, modification time or inode changed (a Secret
// update swaps a symlink, which changes the inode). Whitespace around the token is dropped.
// While the file is empty or unreadable after a change, the previous token stays in use.

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TokenFile holds the token read from Path.
type TokenFile struct {
	Path    string
	Recheck time.Duration // how often the file is looked at; 0: every request

	mu      sync.Mutex
	token   string
	stamp   fileStamp
	checked time.Time
}

type fileStamp struct {
	size  int64
	mtime time.Time
	inode uint64
}

func stampOf(fi os.FileInfo) fileStamp {
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.inode = uint64(st.Ino)
	}
	return s
}

// OpenTokenFile reads the token in `path`; an unreadable or empty file is an error.
func OpenTokenFile(path string) (*TokenFile, error) {
	f := &TokenFile{Path: path, Recheck: time.Second}
	token, stamp, err := readToken(path)
	if err != nil {
		return nil, err
	}
	f.token, f.stamp, f.checked = token, stamp, time.Now()
	return f, nil
}

func readToken(path string) (string, fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fileStamp{}, fmt.Errorf("dispatch token file: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fileStamp{}, fmt.Errorf("dispatch token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fileStamp{}, fmt.Errorf("dispatch token file %s: empty", path)
	}
	return token, stampOf(fi), nil
}

// Token returns the token in force, re-reading the file first when it changed.
func (f *TokenFile) Token() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Sub(f.checked) < f.Recheck {
		return f.token
	}
	f.checked = now
	fi, err := os.Stat(f.Path)
	if err != nil || stampOf(fi) == f.stamp {
		return f.token
	}
	if token, stamp, err := readToken(f.Path); err == nil {
		f.token, f.stamp = token, stamp
	}
	return f.token
}

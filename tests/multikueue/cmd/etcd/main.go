// etcd for the multikueue end-to-end test: etcd's own server (same flags as the etcd binary),
// built from its Go module at the version Kubernetes pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }

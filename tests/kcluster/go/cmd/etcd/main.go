// Command etcd is the etcd server of the test cluster: etcd's own entry point (etcdmain), built
// from the go.etcd.io/etcd/server/v3 module at the version the Kubernetes release requires, so the
// API server talks to the etcd it was tested with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

// CoreDNS for the test node, with only the plugins its Corefile uses (tests/node/cluster.py):
// the full build links every cloud provider's SDK and takes several times as long to compile.
// The directive order is CoreDNS's own (core/dnsserver/zdirectives.go), cut to these plugins.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"log", "errors", "health", "ready", "cache", "kubernetes"}
}

func main() { coremain.Run() }

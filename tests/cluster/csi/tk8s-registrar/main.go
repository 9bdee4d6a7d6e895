// tk8s-registrar registers a CSI driver with the kubelet's plugin watcher.
//
// It replaces node-driver-registrar, whose v2 tags cannot be served by the Go module proxy
// (its go.mod has no /v2 suffix). The kubelet side is just the pluginregistration/v1 gRPC
// service: the kubelet watches <plugins_registry>/<driver>-reg.sock, calls GetInfo and then
// talks CSI to the endpoint we return.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"google.golang.org/grpc"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

type registrar struct {
	registerapi.UnimplementedRegistrationServer
	driver, endpoint string
}

func (r *registrar) GetInfo(ctx context.Context, _ *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	log.Printf("GetInfo: %s at %s", r.driver, r.endpoint)
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.driver,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

func (r *registrar) NotifyRegistrationStatus(ctx context.Context, s *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if !s.PluginRegistered {
		log.Printf("kubelet failed to register %s: %s", r.driver, s.Error)
	} else {
		log.Printf("kubelet registered %s", r.driver)
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

func main() {
	driver := flag.String("driver", "hostpath.csi.k8s.io", "CSI driver name")
	endpoint := flag.String("kubelet-registration-path", "/var/lib/kubelet/plugins/csi-hostpath/csi.sock", "CSI socket path the kubelet should use")
	regDir := flag.String("plugin-registration-path", "/var/lib/kubelet/plugins_registry", "kubelet plugin registration directory")
	flag.Parse()

	if err := os.MkdirAll(*regDir, 0o750); err != nil {
		log.Fatal(err)
	}
	sock := filepath.Join(*regDir, *driver+"-reg.sock")
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatalf("listen %s: %v", sock, err)
	}
	srv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(srv, &registrar{driver: *driver, endpoint: *endpoint})

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
		_ = os.Remove(sock)
		os.Exit(0)
	}()
	log.Printf("serving registration for %s on %s", *driver, sock)
	if err := srv.Serve(l); err != nil {
		log.Fatal(err)
	}
}

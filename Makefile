# hpcio_exporter: build, test and package.
#
#   make build        dist/build/hpcio_exporter, with version, revision, branch,
#                     build user and date stamped in (hpcio_exporter --version)
#   make test         go test -timeout 30m ./... (what CI runs; about 17 minutes)
#   make test-short   go test -short ./... (no real Prometheus, no soak; under a minute)
#   make lint         gofmt, go vet, staticcheck
#   make package      dist/hpcio_exporter_<version>_amd64.deb and
#                     dist/hpcio_exporter-<version>.x86_64.rpm (nfpm)
#   make clean
#
# Tools come from the Go module proxy, pinned: nothing else is downloaded.

GO          ?= go
VERSION     := $(shell cat VERSION)
REVISION    := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
BRANCH      := $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
BUILD_USER  := $(shell id -un 2>/dev/null || echo unknown)@$(shell hostname 2>/dev/null || echo unknown)
BUILD_DATE  := $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
GOARCH      ?= amd64

NFPM        := github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

VERSION_PKG := github.com/prometheus/common/version
LDFLAGS     := -s -w \
	-X $(VERSION_PKG).Version=$(VERSION) \
	-X $(VERSION_PKG).Revision=$(REVISION) \
	-X $(VERSION_PKG).Branch=$(BRANCH) \
	-X $(VERSION_PKG).BuildUser=$(BUILD_USER) \
	-X $(VERSION_PKG).BuildDate=$(BUILD_DATE)

BUILD_DIR   := dist/build
BINARY      := $(BUILD_DIR)/hpcio_exporter
DEB         := dist/hpcio_exporter_$(VERSION)_$(GOARCH).deb
RPM_ARCH    := $(if $(filter amd64,$(GOARCH)),x86_64,$(if $(filter arm64,$(GOARCH)),aarch64,$(GOARCH)))
RPM         := dist/hpcio_exporter-$(VERSION).$(RPM_ARCH).rpm

.PHONY: all build test test-short lint package clean

all: lint test build

# Always rebuilt: the stamp changes with every commit, and go build's own
# cache makes an unchanged build cheap.
build:
	@mkdir -p $(BUILD_DIR)
	CGO_ENABLED=0 GOOS=linux GOARCH=$(GOARCH) $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) ./cmd/hpcio_exporter

test:
	$(GO) test -timeout 30m ./...

test-short:
	$(GO) test -short ./...

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# The man page comes from the binary's own help (kingpin's --help-man), so
# that it lists exactly the flags this build has.
package: build
	$(BINARY) --help-man > $(BUILD_DIR)/hpcio_exporter.1
	gzip -9nf $(BUILD_DIR)/hpcio_exporter.1
	VERSION=$(VERSION) GOARCH=$(GOARCH) $(GO) run $(NFPM) package --config deploy/packaging/nfpm.yaml --packager deb --target $(DEB)
	VERSION=$(VERSION) GOARCH=$(GOARCH) $(GO) run $(NFPM) package --config deploy/packaging/nfpm.yaml --packager rpm --target $(RPM)
	@ls -l $(DEB) $(RPM)

clean:
	rm -rf dist

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/ibtracer/ibtracer_exporter/internal/readlimit"
)

// The web configuration the toolkit reads is a checked copy
// (docs/runbook.md, "File size limits"). exporter-toolkit reads
// --web.config.file again on every request and every TLS handshake, and
// the certificate, key and client CA files it names on every handshake,
// with no bound: a file swapped for /dev/zero under a running exporter
// grew it by hundreds of MB a second. So the toolkit is given a copy in
// a private directory: the file read with readlimit.WebConfig's bound,
// the files it names read with the same bound and put inline (cert, key,
// client_ca: no path is left for the toolkit to read), and the result
// checked by web.Validate. Each must be a regular file: a FIFO, a device
// or a directory is refused at once, by name (a FIFO without a writer
// blocked the exporter in open(2) for ever). The copy is made again only
// when the original or a file it names changes, in content, identity,
// rights or owner (a file refused as unreadable is taken once chmod or
// chown lets the exporter read it); a change that is over the bound, not
// a regular file, unreadable or invalid keeps the last good copy, is
// logged once and is counted in ibtracer_web_config_refused_total.

// webConfigPoll is how often the original and the files it names are
// looked at (a stat each; they are read only when one changed).
const webConfigPoll = 2 * time.Second

// webConfigFiles are the tls_server_config keys that name a file, and the
// key that holds the same content inline.
var webConfigFiles = []struct{ file, inline string }{
	{"cert_file", "cert"}, {"key_file", "key"}, {"client_ca_file", "client_ca"},
}

// webConfigCopy keeps the checked copy of one web configuration file.
type webConfigCopy struct {
	src     string // --web.config.file
	dir     string // private: the copy and its candidates
	path    string // the copy the toolkit reads
	logger  log.Logger
	refused prometheus.Counter

	mu       sync.Mutex
	stamps   map[string]*fileStamp // of the files the copy was made from
	lastErr  string                // of the last refused change, logged once
	lastSeen map[string]*fileStamp // the refused change's, so it is not read again
}

// newWebConfigCopy makes the first copy of src, or says why it cannot:
// the exporter then does not start. An empty src needs no copy (nil).
func newWebConfigCopy(src string, logger log.Logger) (*webConfigCopy, error) {
	if src == "" {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "ibtracer_exporter-web-")
	if err != nil {
		return nil, fmt.Errorf("a private directory for the checked copy of %s: %w", src, err)
	}
	w := &webConfigCopy{src: src, dir: dir, path: filepath.Join(dir, "web.yml"), logger: logger,
		refused: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "ibtracer", Name: "web_config_refused_total",
			Help: "Changes of --web.config.file, or of a file it names, that were refused (over the size bound, not a regular file, unreadable or invalid); the last good web configuration stays in force."})}
	if err := w.refresh(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return w, nil
}

// Path is the file to give the toolkit.
func (w *webConfigCopy) Path() string { return w.path }

// Close removes the copy.
func (w *webConfigCopy) Close() { os.RemoveAll(w.dir) }

// run looks for changes every webConfigPoll until ctx is done.
func (w *webConfigCopy) run(ctx context.Context) {
	t := time.NewTicker(webConfigPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.check()
		}
	}
}

// check makes the copy again when the original or a file it names
// changed; a refused change is counted and logged once.
func (w *webConfigCopy) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !changed(w.stamps) || (w.lastSeen != nil && !changed(w.lastSeen)) {
		return
	}
	err := w.refreshLocked()
	if err == nil {
		if w.lastErr != "" {
			level.Info(w.logger).Log("msg", "web configuration changed and accepted again", "file", w.src)
		}
		w.lastErr, w.lastSeen = "", nil
		return
	}
	w.refused.Inc()
	if err.Error() != w.lastErr {
		level.Error(w.logger).Log("msg", "web configuration change refused; the last good one stays in force", "file", w.src, "err", err)
		w.lastErr = err.Error()
	}
}

func (w *webConfigCopy) refresh() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refreshLocked()
}

// refreshLocked reads the original and the files it names (each with the
// bound), writes the candidate copy, checks it with the toolkit and puts
// it in place. On error the copy in place is untouched and lastSeen holds
// the stamps of what was refused.
func (w *webConfigCopy) refreshLocked() error {
	stamps := map[string]*fileStamp{}
	err := w.build(stamps)
	if err != nil {
		w.lastSeen = stamps
		return err
	}
	w.stamps = stamps
	return nil
}

func (w *webConfigCopy) build(stamps map[string]*fileStamp) error {
	b, err := readStamped(w.src, stamps)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("%s: %w", w.src, err)
	}
	if tls := mappingValue(&doc, "tls_server_config"); tls != nil {
		for _, f := range webConfigFiles {
			k, v := mappingEntry(tls, f.file)
			if k == nil || v.Value == "" {
				continue
			}
			p := v.Value
			if !filepath.IsAbs(p) { // relative to the file, as the toolkit takes it
				p = filepath.Join(filepath.Dir(w.src), p)
			}
			content, err := readStamped(p, stamps)
			if err != nil {
				return fmt.Errorf("%s: tls_server_config: %s: %w", w.src, f.file, err)
			}
			k.Value = f.inline
			v.Value, v.Tag, v.Style = string(content), "!!str", yaml.LiteralStyle
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return fmt.Errorf("%s: %w", w.src, err)
	}
	cand := filepath.Join(w.dir, "candidate.yml")
	if err := os.WriteFile(cand, out, 0o600); err != nil {
		return err
	}
	if err := web.Validate(cand); err != nil {
		os.Remove(cand)
		return fmt.Errorf("%s: %w", w.src, err)
	}
	return os.Rename(cand, w.path)
}

// readStamped reads path with the web configuration's bound, as a
// regular file, and records its stamp (taken before the read: a change
// during it is seen next time).
func readStamped(path string, stamps map[string]*fileStamp) ([]byte, error) {
	st, err := stampOf(path)
	stamps[path] = st
	if err != nil {
		return nil, err
	}
	return readlimit.ReadRegularFile(path, readlimit.WebConfig)
}

// fileStamp is what stat(2) says of a file that can change whether the
// exporter may read it or what it would read: which file it is, its
// size and modification time, its type and rights, its owner, and the
// time of its inode's last change (ctime, which chmod, chown and ACL
// changes set as well). A refused change is read again when any of them
// changes.
type fileStamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
	mode         uint32 // type and permission bits
	uid, gid     uint32
}

// stampOf stats path (following links); nil when it cannot.
func stampOf(path string) (*fileStamp, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	for err == unix.EINTR { // as os.Stat: a signal (the runtime's preemption) may interrupt it
		err = unix.Stat(path, &st)
	}
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return &fileStamp{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size, mtime: st.Mtim, ctime: st.Ctim,
		mode: uint32(st.Mode), uid: st.Uid, gid: st.Gid}, nil
}

// changed says whether any file of stamps has appeared, gone, or has
// another stamp now.
func changed(stamps map[string]*fileStamp) bool {
	for path, old := range stamps {
		now, _ := stampOf(path)
		if (now == nil) != (old == nil) || (now != nil && *now != *old) {
			return true
		}
	}
	return false
}

// mappingValue is the value of key in the document's top mapping.
func mappingValue(doc *yaml.Node, key string) *yaml.Node {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil
	}
	_, v := mappingEntry(doc.Content[0], key)
	return v
}

// mappingEntry is the key and value nodes of key in mapping m.
func mappingEntry(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

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
// checked by web.Validate. The copy is made again only when the original
// or a file it names changes; a change that is over the bound,
// unreadable or invalid keeps the last good copy, is logged once and is
// counted in ibtracer_web_config_refused_total.

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
	stamps   map[string]os.FileInfo // of the files the copy was made from
	lastErr  string                 // of the last refused change, logged once
	lastSeen map[string]os.FileInfo // the refused change's, so it is not read again
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
			Help: "Changes of --web.config.file, or of a file it names, that were refused (over the size bound, unreadable or invalid); the last good web configuration stays in force."})}
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
	stamps := map[string]os.FileInfo{}
	err := w.build(stamps)
	if err != nil {
		w.lastSeen = stamps
		return err
	}
	w.stamps = stamps
	return nil
}

func (w *webConfigCopy) build(stamps map[string]os.FileInfo) error {
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

// readStamped reads path with the web configuration's bound and records
// its stamp (taken before the read: a change during it is seen next time).
func readStamped(path string, stamps map[string]os.FileInfo) ([]byte, error) {
	if fi, err := os.Stat(path); err == nil {
		stamps[path] = fi
	} else {
		stamps[path] = nil
		return nil, err
	}
	return readlimit.ReadFile(path, readlimit.WebConfig)
}

// changed says whether any file of stamps is another file now, or has
// another size or modification time.
func changed(stamps map[string]os.FileInfo) bool {
	for path, old := range stamps {
		fi, err := os.Stat(path)
		if err != nil || old == nil {
			if (err != nil) != (old == nil) {
				return true
			}
			continue
		}
		if !os.SameFile(old, fi) || fi.Size() != old.Size() || !fi.ModTime().Equal(old.ModTime()) {
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

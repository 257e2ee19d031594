package service

import "github.com/ibtracer/ibtracer_exporter/ibmad"

// Engine returns the open device's engine, or nil while there is none
// (tests).
func (s *Service) Engine() *ibmad.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dev == nil {
		return nil
	}
	return s.dev.engine
}

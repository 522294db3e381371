package api

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/edgegrid/edgegrid/pkg/resource"
)

func (s *Server) putTopic(c echo.Context) error {
	name := param(c, "topic")
	body, err := s.readResourceBody(c)
	if err != nil {
		return err
	}
	t, err := resource.DecodeTopic(body, name)
	if err != nil {
		return err
	}
	stored, created, err := s.resources.PutTopic(c.Request().Context(), t)
	if err != nil {
		return err
	}
	s.log.Info().Str("topic", stored.Name).Str("inputSchema", string(stored.InputSchema)).Bool("created", created).Msg("topic saved")
	return c.JSON(http.StatusOK, s.topicResponse(stored, s.endpointBase()))
}

func (s *Server) getTopic(c echo.Context) error {
	t, err := s.resources.Topic(c.Request().Context(), param(c, "topic"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, s.topicResponse(t, s.endpointBase()))
}

func (s *Server) listTopics(c echo.Context) error {
	ts, err := s.resources.Topics(c.Request().Context())
	if err != nil {
		return err
	}
	out := make([]resource.Topic, 0, len(ts))
	base := s.endpointBase()
	for _, t := range ts {
		out = append(out, s.topicResponse(t, base))
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Server) deleteTopic(c echo.Context) error {
	name := param(c, "topic")
	if err := s.resources.DeleteTopic(c.Request().Context(), name); err != nil {
		return err
	}
	s.svc.Metrics.TopicDeleted(name)
	s.log.Info().Str("topic", name).Msg("topic deleted")
	return c.NoContent(http.StatusOK)
}

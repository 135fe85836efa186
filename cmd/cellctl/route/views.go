package route

import "github.com/cellctl/cellctl/internal/render/routeview"

// The reports of the routing commands and their views live in
// internal/render/routeview; the commands build the reports and render
// them through the view they picked.
type (
	RouteReport  = routeview.RouteReport
	Placement    = routeview.Placement
	TenantRoute  = routeview.TenantRoute
	TenantError  = routeview.TenantError
	RouteDiff    = routeview.RouteDiff
	TenantChange = routeview.TenantChange
	RoutesShown  = routeview.RoutesShown
	DiffShown    = routeview.DiffShown
	ServedTable  = routeview.ServedTable
	CapacityDoc  = routeview.CapacityDoc
	LanesReport  = routeview.LanesReport
	CellLanes    = routeview.CellLanes
	CheckReport  = routeview.CheckReport
)

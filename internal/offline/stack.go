package offline

// Stack is one rendered stack as the fleet's evaluators read it — the
// access paths (internal/access), the network paths (internal/netpath) and
// the simulator's traffic: what it registered and looked up, the cell that
// owns it (or OwnerRouter), and the account and region it lives in.
type Stack struct {
	Name string
	// Owner is the cell id, or OwnerRouter.
	Owner     string
	Account   string
	Region    string
	Partition string
	Resources []*Resource
	// Invokes are the data-source calls the program made: a managed
	// prefix list it looked up is named by its id in its rules.
	Invokes []Invoke
}

// OwnerRouter owns the router stack's resources.
const OwnerRouter = "router"

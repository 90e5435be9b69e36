"""Corrections issue 33's second probe found read as restatements: a changed time, date, unit, bound,
negation or modality in forms the first probe did not try. Shared by the table's unit test (private
memories: the meaning table) and the HTTP test (shared memory: the letter rule)."""

CORRECTIONS = [
    # a time: a.m. / p.m. written with full stops
    (
        "the cleaners start at 7 a.m. in the packing hall on weekdays",
        "the cleaners start at 7 p.m. in the packing hall on weekdays",
    ),
    # a date: the months of two dates swapped
    (
        "the stocktake at the depot is on March 4 and the audit on May 3",
        "the stocktake at the depot is on May 4 and the audit on March 3",
    ),
    # a date: an ordinal day past the tenth
    (
        "the payroll cut-off for warehouse staff is the eleventh of each month",
        "the payroll cut-off for warehouse staff is the twelfth of each month",
    ),
    # a unit: currencies the table does not know, as a symbol and as a word
    (
        "the courier fee for parcels from the depot is \u20b9300 per delivery",
        "the courier fee for parcels from the depot is \u20a9300 per delivery",
    ),
    (
        "the courier fee for parcels from the depot is 300 rupees per delivery",
        "the courier fee for parcels from the depot is 300 yen per delivery",
    ),
    # a unit: degrees Celsius / Fahrenheit, per cent / per mille, "min" / "s"
    (
        "the cold room thermostat in the depot is set to 5\u00b0C overnight",
        "the cold room thermostat in the depot is set to 5\u00b0F overnight",
    ),
    (
        "the nightly backup of the billing ledger keeps 50 % of the records",
        "the nightly backup of the billing ledger keeps 50 \u2030 of the records",
    ),
    (
        "the backup of the billing ledger at the east office runs for 90 min for the auditors",
        "the backup of the billing ledger at the east office runs for 90 s for the auditors",
    ),
    # a quantity: a bound's direction
    (
        "pallets are stacked <3 high in the packing hall by pickers on shift",
        "pallets are stacked >3 high in the packing hall by pickers on shift",
    ),
    (
        "the price of a pallet at the depot rose by 10 dollars this year",
        "the price of a pallet at the depot fell by 10 dollars this year",
    ),
    # a negation: Dutch, French "ne ... plus", Spanish "sin" and accented "jamás", "ceased"
    (
        "de back-up van het factuurboek wordt gemaakt voor de auditors",
        "de back-up van het factuurboek wordt niet gemaakt voor de auditors",
    ),
    (
        "la porte du d\u00e9p\u00f4t est ouverte la nuit pour les livreurs du quai",
        "la porte du d\u00e9p\u00f4t n'est plus ouverte la nuit pour les livreurs du quai",
    ),
    (
        "el respaldo del libro se hace con los auditores externos",
        "el respaldo del libro se hace sin los auditores externos",
    ),
    (
        "el respaldo del libro se hace siempre para los auditores externos",
        "el respaldo del libro se hace jam\u00e1s para los auditores externos",
    ),
    (
        "the packing hall uses shrink wrap for outgoing pallets on the dock",
        "the packing hall ceased using shrink wrap for outgoing pallets on the dock",
    ),
    # a modality: permission / prohibition, obligation / advice
    (
        "the depot permits smoking in the yard during breaks for drivers",
        "the depot forbids smoking in the yard during breaks for drivers",
    ),
    (
        "pickers are obliged to wear gloves when handling chemicals at the depot",
        "pickers are advised to wear gloves when handling chemicals at the depot",
    ),
]
